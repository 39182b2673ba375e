import { createServer, type AddressInfo, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import t, { type Test } from 'tap';
import { queueId, SmtpMailer } from '../../src/adapters/mail/smtpMailer.ts';
import { MailSendError, type OutgoingMail } from '../../src/ports/mailer.ts';
import { startSmtpSink } from './smtpSink.ts';

const reply = (n: number, overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  messageId: `<reply.${n}@mail.acme.test>`,
  from: { name: 'Ana at Acme', address: 'ana@mail.acme.test' },
  to: { name: 'Jane Prospect', address: 'jane@prospect.io' },
  replyTo: { name: null, address: 'replies@mail.acme.test' },
  subject: 'Re: Guest post idea for acme.test',
  text: 'Hi Jane,\n\nThanks, we would be glad to.\n\nAna',
  inReplyTo: '<pitch-2@prospect.io>',
  references: ['<pitch-1@prospect.io>', '<ack-1@mail.acme.test>', '<pitch-2@prospect.io>'],
  ...overrides,
});

async function sendError(promise: Promise<unknown>): Promise<MailSendError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof MailSendError) return e;
    throw e;
  }
  throw new Error('the send succeeded');
}

t.test('SMTP mailer against a real SMTP server', async (t) => {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const mailer = new SmtpMailer(sink.url);
  t.teardown(() => mailer.close());
  t.equal(mailer.name, 'smtp');
  t.equal(mailer.idempotent, false);

  t.test('the message carries exactly our From, To, Reply-To, Subject, Message-Id, In-Reply-To and References', async (t) => {
    sink.behaviour = { accepted: () => '2.0.0 Ok: queued as ABC123' };
    const result = await mailer.send(reply(1));
    t.same(result, { mailProviderMessageId: 'ABC123' }, 'the queue id of the 250 reply');
    const got = sink.received.at(-1)!;
    t.equal(got.mailFrom, 'ana@mail.acme.test', 'envelope sender');
    t.same(got.rcptTo, ['jane@prospect.io'], 'envelope recipient');
    const p = got.parsed;
    t.same(p.from?.value, [{ name: 'Ana at Acme', address: 'ana@mail.acme.test' }]);
    t.same(!Array.isArray(p.to) && p.to?.value, [{ name: 'Jane Prospect', address: 'jane@prospect.io' }]);
    t.same(!Array.isArray(p.replyTo) && p.replyTo?.value, [{ name: '', address: 'replies@mail.acme.test' }]);
    t.equal(p.subject, 'Re: Guest post idea for acme.test');
    t.equal(p.messageId, '<reply.1@mail.acme.test>');
    t.equal(p.inReplyTo, '<pitch-2@prospect.io>');
    t.same(p.references, ['<pitch-1@prospect.io>', '<ack-1@mail.acme.test>', '<pitch-2@prospect.io>']);
    t.equal(p.text, 'Hi Jane,\n\nThanks, we would be glad to.\n\nAna\n');
    t.equal(p.headers.get('message-id'), '<reply.1@mail.acme.test>', 'one Message-Id header, ours');
  });

  t.test('no line of the message is longer than 998 characters, not even for an unbroken 998-character subject', async (t) => {
    sink.behaviour = {};
    for (const subject of ['x'.repeat(998), `Re: ${'é'.repeat(994)}`, `Re: ${'https://example.com/'.repeat(40)}`]) {
      await mailer.send(reply(9, { subject }));
      const got = sink.received.at(-1)!;
      const lines = got.raw.toString('latin1').split('\r\n');
      t.ok(Math.max(...lines.map((l) => l.length)) <= 998, `longest line ${Math.max(...lines.map((l) => l.length))}`);
      t.equal(got.parsed.subject, subject, 'the subject reads back as sent');
    }
  });

  t.test('a first message (no thread) has neither In-Reply-To nor References', async (t) => {
    sink.behaviour = {};
    const result = await mailer.send(reply(2, { inReplyTo: null, references: [], replyTo: null, subject: 'Ünïcode subject ✓' }));
    t.same(result, { mailProviderMessageId: '<reply.2@mail.acme.test>' }, 'no queue id in `250 OK: message queued`: our Message-Id');
    const p = sink.received.at(-1)!.parsed;
    t.equal(p.inReplyTo, undefined);
    t.equal(p.references, undefined);
    t.equal(p.replyTo, undefined);
    t.equal(p.subject, 'Ünïcode subject ✓');
  });

  t.test('a 4xx answer is a transient failure', async (t) => {
    sink.behaviour = { rcpt: () => ({ code: 450, message: '4.2.1 mailbox busy, try later' }) };
    const rcpt = await sendError(mailer.send(reply(3)));
    t.equal(rcpt.permanent, false);
    t.match(rcpt.message, /450/);
    sink.behaviour = { data: () => ({ code: 451, message: '4.3.0 local error, try later' }) };
    const data = await sendError(mailer.send(reply(4)));
    t.equal(data.permanent, false);
    t.match(data.message, /451/);
  });

  t.test('a 5xx answer is a permanent failure', async (t) => {
    sink.behaviour = { rcpt: () => ({ code: 550, message: '5.1.1 no such user' }) };
    const rcpt = await sendError(mailer.send(reply(5)));
    t.equal(rcpt.permanent, true);
    t.match(rcpt.message, /550/);
    sink.behaviour = { data: () => ({ code: 554, message: '5.7.1 message refused as spam' }) };
    const data = await sendError(mailer.send(reply(6)));
    t.equal(data.permanent, true);
    t.match(data.message, /554/);
  });

  t.test('after failures the pooled connection still sends', async (t) => {
    sink.behaviour = { accepted: () => 'OK id=1rZabc-0004Xy-2Q' };
    t.same(await mailer.send(reply(7)), { mailProviderMessageId: '1rZabc-0004Xy-2Q' }, 'Exim-style id=');
    t.equal(sink.received.at(-1)!.parsed.messageId, '<reply.7@mail.acme.test>');
  });

  t.test('a malformed Message-Id is refused before sending, permanently', async (t) => {
    const before = sink.received.length;
    const e = await sendError(mailer.send(reply(8, { messageId: 'reply.8@mail.acme.test' })));
    t.equal(e.permanent, true);
    t.equal(sink.received.length, before);
  });
});

t.test('credentials in the URL authenticate', async (t) => {
  const sink = await startSmtpSink({ auth: { user: 'relay-user', pass: 's3cret/+' } });
  t.teardown(() => sink.close());
  const good = new SmtpMailer(`smtp://relay-user:${encodeURIComponent('s3cret/+')}@127.0.0.1:${sink.port}`);
  t.teardown(() => good.close());
  await good.send(reply(1));
  t.equal(sink.received.length, 1);
  const bad = new SmtpMailer(`smtp://relay-user:wrong@127.0.0.1:${sink.port}`);
  t.teardown(() => bad.close());
  const e = await sendError(bad.send(reply(2)));
  t.match(e.message, /535/);
  t.match(e.message, /the relay refused our credentials; check OUTBOUND_SMTP_URL/);
  t.equal(e.permanent, false, 'a 535 is about our credentials, not the message: retried (within AGENT_SEND_ATTEMPTS) once they are fixed');
});

t.test('connection failures are transient', async (t) => {
  t.test('nothing listens on the port', async (t) => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const mailer = new SmtpMailer(`smtp://127.0.0.1:${port}`);
    t.teardown(() => mailer.close());
    const e = await sendError(mailer.send(reply(1)));
    t.equal(e.permanent, false);
    t.ok(e.cause, 'the nodemailer error is kept as the cause');
  });

  t.test('a server that never greets times out', async (t) => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    t.teardown(() => {
      for (const s of sockets) s.destroy();
      silent.close();
    });
    const mailer = new SmtpMailer(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, { greetingTimeoutMs: 300 });
    t.teardown(() => mailer.close());
    const e = await sendError(mailer.send(reply(1)));
    t.equal(e.permanent, false);
    t.match(e.message, /Greeting never received/);
    t.equal((e.cause as { code?: string }).code, 'ETIMEDOUT');
  });
});

/** A relay that holds its answer at one step of the transaction longer than the mailer's socket timeout. */
async function stallingRelay(t: Test, at: 'rcpt' | 'data') {
  const received: string[] = [];
  const relay = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    authOptional: true,
    onRcptTo(_address, _session, callback) {
      if (at === 'rcpt') setTimeout(() => callback(), 1_500);
      else callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString());
        setTimeout(() => callback(null), 1_500);
      });
    },
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => relay.close(() => r())));
  const mailer = new SmtpMailer(`smtp://127.0.0.1:${(relay.server.address() as AddressInfo).port}`, { socketTimeoutMs: 400 });
  t.teardown(() => mailer.close());
  return { mailer, received };
}

t.test('a timeout after the whole message reached the relay is outcome_unknown and permanent: a retry could deliver it twice', async (t) => {
  const { mailer, received } = await stallingRelay(t, 'data');
  const e = await sendError(mailer.send(reply(1)));
  t.equal(received.length, 1, 'the relay has the message; only its 250 is late');
  t.equal(e.permanent, true, 'not retried');
  t.match(e.message, /^outcome_unknown: SMTP send failed: Timeout after the whole message was handed to the relay/);
  t.equal((e.cause as { code?: string }).code, 'ETIMEDOUT');
});

t.test('a timeout before the message was sent stays temporary', async (t) => {
  const { mailer, received } = await stallingRelay(t, 'rcpt');
  const e = await sendError(mailer.send(reply(1)));
  t.equal(received.length, 0);
  t.equal(e.permanent, false, 'retried later');
  t.notMatch(e.message, /outcome_unknown/);
});

t.test('queue ids from common relays', async (t) => {
  t.equal(queueId('250 2.0.0 Ok: queued as ABC123'), 'ABC123', 'Postfix');
  t.equal(queueId('250 OK id=1rZabc-0004Xy-2Q'), '1rZabc-0004Xy-2Q', 'Exim');
  t.equal(queueId('250 Message queued as <20240101.abc@relay.test>'), '20240101.abc@relay.test');
  t.equal(queueId('250 OK: message queued'), null);
  t.equal(queueId('250 2.0.0 OK'), null);
  t.equal(queueId(undefined), null);
});
