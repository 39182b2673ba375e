import nodemailer from 'nodemailer';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { eventsOfType } from './helpers.ts';

/**
 * From an audit of the mailbox: a sender on an internationalised domain was refused for good (550),
 * though REST takes the same address in its ASCII form; and a mail's text was stored whatever its
 * size up to the 10 MiB message limit (REST stops at INGESTION_BODY_LIMIT_BYTES).
 */
const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
t.teardown(() => app.close());
const { services } = app;
const tenant = await createTenant(services);
const mailbox = await startForwardingMailbox(services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024, maxBodyChars: 1_000 });
t.teardown(() => mailbox.close());
const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
t.teardown(() => transport.close());
const raw = (from: string, id: string, body = 'Would you link to our guide at https://exämple.de/guide?') =>
  transport.sendMail({
    envelope: { from: 'bounce@relay.test', to: [tenant.forwardingAddress] },
    raw: `From: ${from}\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <${id}@relay.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${body}\r\n`,
  });
const lastIngested = async () => (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as { from: string; fromName: string | null; bodyText: string };

t.test('a sender on an internationalised domain is ingested with the domain as DNS has it', async (t) => {
  for (const [from, id] of [
    ['Jörg <jorg@xn--exmple-cua.de>', 'idn-ascii'],
    ['Jörg <jorg@exämple.de>', 'idn-utf8'],
    ['=?UTF-8?B?SsO2cmc=?= <jorg@EXÄMPLE.de>', 'idn-upper'],
  ] as const) {
    const info = await raw(from, id);
    t.same(info.accepted, [tenant.forwardingAddress], `${from}: accepted (it was 550 5.1.7)`);
    t.match(await lastIngested(), { from: /^jorg@xn--exmple-cua\.de$/i, fromName: 'Jörg' }, from);
  }
  const ascii = await raw('Ann <ann@plain.example>', 'ascii');
  t.same(ascii.accepted, [tenant.forwardingAddress]);
  t.equal((await lastIngested()).from, 'ann@plain.example', 'an ASCII domain is kept as it is');
});

t.test("a mail's text is stored up to the body limit (INGESTION_BODY_LIMIT_BYTES), not the whole message", async (t) => {
  const info = await raw('Long <long@prospect.example>', 'long', `${'a'.repeat(999)}€${'b'.repeat(5_000)}`);
  t.same(info.accepted, [tenant.forwardingAddress]);
  const { bodyText } = await lastIngested();
  t.equal(bodyText.length, 1_000, 'cut at the limit');
  t.ok(bodyText.endsWith('a€'), 'at a character boundary');
});
