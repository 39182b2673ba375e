import { simpleParser } from 'mailparser';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { OutboxMailer } from '../../src/adapters/mail/outboxMailer.ts';
import type { OutgoingMail } from '../../src/ports/mailer.ts';
import { outreach } from '../helpers/cli.ts';

// Each CLI run is a fresh Node process: allow for busy machines.
t.setTimeout(120_000);

const dataDir = mkdtempSync(join(tmpdir(), 'outreach-outbox-cli-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir };

const reply = (n: number, to: string, at: string): [OutgoingMail, Date] => [
  {
    messageId: `<reply.${n}@mail.acme.test>`,
    from: { name: 'Ana at Acme', address: 'ana@mail.acme.test' },
    to: { name: null, address: to },
    subject: `Re: pitch ${n}`,
    text: `Reply number ${n}.`,
    inReplyTo: `<pitch-${n}@prospect.io>`,
    references: [`<pitch-${n}@prospect.io>`],
  },
  new Date(at),
];

t.test('an empty data directory lists nothing and creates no outbox', async (t) => {
  const r = await outreach(['outbox', '--json'], env);
  t.equal(r.code, 0, r.stderr);
  t.same(r.json(), { messages: [] });
  t.notOk(existsSync(join(dataDir, 'outbox.sqlite')));
});

t.test('outbox lists, newest first; show prints the raw message', async (t) => {
  let now = new Date();
  const box = OutboxMailer.inDataDir(dataDir, { clock: { now: () => now } });
  for (const [mail, at] of [
    reply(1, 'jane@prospect.io', '2025-03-01T10:00:00.000Z'),
    reply(2, 'bob@other.test', '2025-03-01T11:00:00.000Z'),
    reply(3, 'jane@prospect.io', '2025-03-01T12:00:00.000Z'),
  ]) {
    now = at;
    await box.send(mail);
  }
  const raw = box.getOutboxMessage('<reply.2@mail.acme.test>')!.raw;
  await box.close();

  const [list, human, filtered, show, showBare, showJson, missing] = await Promise.all([
    outreach(['--json', 'outbox'], env),
    outreach(['outbox', '--limit', '2'], env),
    outreach(['--json', 'outbox', '--to', 'JANE@prospect.io'], env),
    outreach(['outbox', 'show', '<reply.2@mail.acme.test>'], env),
    outreach(['outbox', 'show', 'reply.2@mail.acme.test'], env),
    outreach(['--json', 'outbox', 'show', '<reply.2@mail.acme.test>'], env),
    outreach(['--json', 'outbox', 'show', '<nope@mail.acme.test>'], env),
  ]);

  t.equal(list.code, 0, list.stderr);
  const { messages } = list.json<{ messages: Array<Record<string, unknown>> }>();
  t.same(messages.map((m) => m.messageId), ['<reply.3@mail.acme.test>', '<reply.2@mail.acme.test>', '<reply.1@mail.acme.test>']);
  t.same(messages[1], {
    time: '2025-03-01T11:00:00.000Z',
    to: 'bob@other.test',
    from: 'ana@mail.acme.test',
    subject: 'Re: pitch 2',
    messageId: '<reply.2@mail.acme.test>',
    inReplyTo: '<pitch-2@prospect.io>',
  });

  t.equal(human.code, 0, human.stderr);
  t.same(human.stdout.trimEnd().split('\n'), [
    '2 messages in the outbox',
    '2025-03-01T12:00:00.000Z  jane@prospect.io  Re: pitch 3  <reply.3@mail.acme.test>',
    '2025-03-01T11:00:00.000Z  bob@other.test  Re: pitch 2  <reply.2@mail.acme.test>',
  ]);

  t.same(filtered.json<{ messages: Array<{ messageId: string }> }>().messages.map((m) => m.messageId), ['<reply.3@mail.acme.test>', '<reply.1@mail.acme.test>']);

  t.equal(show.code, 0, show.stderr);
  t.equal(show.stdout, raw.toString('utf8'), 'the stored bytes, unchanged');
  const parsed = await simpleParser(show.stdout);
  t.equal(parsed.messageId, '<reply.2@mail.acme.test>');
  t.equal(parsed.inReplyTo, '<pitch-2@prospect.io>');
  t.equal(showBare.stdout, show.stdout, 'angle brackets are optional');
  t.match(showJson.json(), { messageId: '<reply.2@mail.acme.test>', to: 'bob@other.test', raw: raw.toString('utf8') });

  t.equal(missing.code, 1);
  t.same(missing.json(), { error: 'no message <nope@mail.acme.test> in the outbox' });
});

t.test('a bad --limit is refused', async (t) => {
  const r = await outreach(['--json', 'outbox', '--limit', '0'], env);
  t.equal(r.code, 1);
  t.match(r.json(), { error: /--limit must be a positive integer/ });
});
