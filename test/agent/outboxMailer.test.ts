import { simpleParser } from 'mailparser';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createMailer } from '../../src/adapters/mail/createMailer.ts';
import { OutboxMailer } from '../../src/adapters/mail/outboxMailer.ts';
import { SmtpMailer } from '../../src/adapters/mail/smtpMailer.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { MailSendError, type OutgoingMail } from '../../src/ports/mailer.ts';
import { startSmtpSink } from './smtpSink.ts';

const reply = (n: number, overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  messageId: `<reply.${n}@mail.acme.test>`,
  from: { name: 'Ana at Acme', address: 'ana@mail.acme.test' },
  to: { name: 'Jane Prospect', address: 'jane@prospect.io' },
  subject: `Re: Guest post idea ${n}`,
  text: 'Hi Jane,\n\nThanks, we would be glad to.\n\nAna',
  inReplyTo: '<pitch-2@prospect.io>',
  references: ['<pitch-1@prospect.io>', '<pitch-2@prospect.io>'],
  ...overrides,
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-outbox-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test('the outbox stores the full message; it parses back with our headers', async (t) => {
  const dir = tempDir();
  let now = new Date('2025-03-01T10:00:00.000Z');
  const outbox = OutboxMailer.inDataDir(join(dir, 'data'), { clock: { now: () => now } });
  t.teardown(() => outbox.close());
  t.equal(outbox.name, 'outbox');
  t.equal(outbox.idempotent, true);

  t.same(await outbox.send(reply(1)), { mailProviderMessageId: '<reply.1@mail.acme.test>' });
  const stored = outbox.getOutboxMessage('<reply.1@mail.acme.test>')!;
  t.match(stored, {
    messageId: '<reply.1@mail.acme.test>',
    to: 'jane@prospect.io',
    from: 'ana@mail.acme.test',
    subject: 'Re: Guest post idea 1',
    inReplyTo: '<pitch-2@prospect.io>',
    createdAt: '2025-03-01T10:00:00.000Z',
  });
  t.ok(stored.raw.includes('\r\n'), 'CRLF line ends, as on the wire');
  t.notOk(/[^\r]\n/.test(stored.raw.toString('latin1')), 'no bare LF');
  const p = await simpleParser(stored.raw);
  t.same(p.from?.value, [{ name: 'Ana at Acme', address: 'ana@mail.acme.test' }]);
  t.same(!Array.isArray(p.to) && p.to?.value, [{ name: 'Jane Prospect', address: 'jane@prospect.io' }]);
  t.equal(p.subject, 'Re: Guest post idea 1');
  t.equal(p.messageId, '<reply.1@mail.acme.test>');
  t.equal(p.inReplyTo, '<pitch-2@prospect.io>');
  t.same(p.references, ['<pitch-1@prospect.io>', '<pitch-2@prospect.io>']);
  t.equal(p.text, 'Hi Jane,\n\nThanks, we would be glad to.\n\nAna\n');
  t.equal(outbox.getOutboxMessage('<unknown@x.test>'), null);

  t.test('the same Message-Id twice stores once and answers the same', async (t) => {
    now = new Date('2025-03-01T10:05:00.000Z');
    const again = await outbox.send(reply(1, { subject: 'a different draft', text: 'changed' }));
    t.same(again, { mailProviderMessageId: '<reply.1@mail.acme.test>' });
    t.equal(outbox.listOutbox({ limit: 100 }).length, 1);
    const same = outbox.getOutboxMessage('<reply.1@mail.acme.test>')!;
    t.equal(same.subject, 'Re: Guest post idea 1', 'the first message stays');
    t.ok(same.raw.equals(stored.raw), 'byte for byte');
  });

  t.test('two concurrent sends of one reply store it once', async (t) => {
    await Promise.all([outbox.send(reply(2)), outbox.send(reply(2)), outbox.send(reply(2))]);
    t.equal(outbox.listOutbox({ limit: 100 }).filter((e) => e.messageId === '<reply.2@mail.acme.test>').length, 1);
  });

  t.test('listOutbox: newest first, limited, filtered by recipient ignoring case', async (t) => {
    now = new Date('2025-03-01T11:00:00.000Z');
    await outbox.send(reply(3, { to: { name: null, address: 'bob@other.test' } }));
    now = new Date('2025-03-01T12:00:00.000Z');
    await outbox.send(reply(4));
    t.same(outbox.listOutbox({ limit: 10 }).map((e) => e.messageId), ['<reply.4@mail.acme.test>', '<reply.3@mail.acme.test>', '<reply.2@mail.acme.test>', '<reply.1@mail.acme.test>']);
    t.same(outbox.listOutbox({ limit: 2 }).map((e) => e.messageId), ['<reply.4@mail.acme.test>', '<reply.3@mail.acme.test>']);
    t.same(outbox.listOutbox({ limit: 10, to: 'Jane@Prospect.io' }).map((e) => e.messageId), ['<reply.4@mail.acme.test>', '<reply.2@mail.acme.test>', '<reply.1@mail.acme.test>']);
    t.same(outbox.listOutbox({ limit: 10, to: 'nobody@x.test' }), []);
  });

  t.test('a malformed Message-Id is refused, permanently, and nothing is stored', async (t) => {
    const before = outbox.listOutbox({ limit: 100 }).length;
    for (const bad of [reply(5, { messageId: 'no-brackets@x.test' }), reply(5, { references: ['<ok@x.test>', 'bad'] }), reply(5, { inReplyTo: '<a@b.test> <c@d.test>' })]) {
      const error = await outbox.send(bad).then(() => null, (e: unknown) => e);
      t.ok(error instanceof MailSendError && error.permanent, 'permanent MailSendError');
    }
    t.equal(outbox.listOutbox({ limit: 100 }).length, before);
  });
});

t.test('the outbox file is readable by its owner only; a reopened outbox keeps its mail', async (t) => {
  const dir = tempDir();
  const first = OutboxMailer.inDataDir(dir);
  await first.send(reply(1));
  t.equal(statSync(join(dir, 'outbox.sqlite')).mode & 0o777, 0o600);
  if (existsSync(join(dir, 'outbox.sqlite-wal'))) t.equal(statSync(join(dir, 'outbox.sqlite-wal')).mode & 0o777, 0o600, 'the WAL too');
  await first.close();
  const second = OutboxMailer.inDataDir(dir);
  t.teardown(() => second.close());
  await second.send(reply(1));
  t.same(second.listOutbox({ limit: 10 }).map((e) => e.messageId), ['<reply.1@mail.acme.test>']);
});

t.test('the outbox holds the bytes SMTP sends (all but the Date header)', async (t) => {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const smtp = new SmtpMailer(sink.url);
  t.teardown(() => smtp.close());
  const outbox = OutboxMailer.inDataDir(tempDir());
  t.teardown(() => outbox.close());
  const mail = reply(9, { subject: 'Re: Ünïcode ✓ and a rather long subject line that has to be folded over more than one header line' });
  await smtp.send(mail);
  await outbox.send(mail);
  const withoutDate = (raw: Buffer) => raw.toString('latin1').replace(/^Date: .*\r\n/m, '').replace(/\r\n$/, '');
  t.equal(withoutDate(outbox.getOutboxMessage(mail.messageId)!.raw), withoutDate(sink.received[0]!.raw));
});

t.test('createMailer: the SMTP relay when OUTBOUND_SMTP_URL is set, else the outbox', async (t) => {
  const dir = tempDir();
  const embedded = createMailer(loadConfig({ DATA_DIR: dir }));
  t.teardown(() => embedded.close());
  t.ok(embedded instanceof OutboxMailer);
  t.ok(existsSync(join(dir, 'outbox.sqlite')));
  const relay = createMailer(loadConfig({ DATA_DIR: dir, OUTBOUND_SMTP_URL: 'smtps://user:pass@smtp.example.test:465' }));
  t.teardown(() => relay.close());
  t.ok(relay instanceof SmtpMailer);
  for (const bad of ['http://smtp.example.test', 'smtp://', 'smtp.example.test:25']) {
    let error: unknown = null;
    try {
      loadConfig({ OUTBOUND_SMTP_URL: bad });
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof ConfigError, `${bad} is refused`);
  }
  t.throws(() => loadConfig({ OUTBOUND_SMTP_URL: 'http://x' }), /OUTBOUND_SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
});
