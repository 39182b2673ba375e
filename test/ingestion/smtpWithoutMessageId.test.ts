import nodemailer from 'nodemailer';
import t from 'tap';
import { eventsOfType, startMailboxApp } from './helpers.ts';

/** A raw message with no Message-Id header, as some sending servers emit; nodemailer sends `raw` unchanged. */
const rawMail = (to: string, subject: string, body: string) =>
  [
    'From: Jane Prospect <jane@prospect.io>',
    `To: ${to}`,
    `Subject: ${subject}`,
    'Date: Thu, 15 Jan 2026 12:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');

t.test('mail without a Message-Id, sent twice by a real SMTP client (a retry), is ingested once', async (t) => {
  const { app, tenant, mailbox } = await startMailboxApp(t);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  const envelope = { from: 'jane@prospect.io', to: [tenant.forwardingAddress] };
  const raw = rawMail(tenant.forwardingAddress, 'A guest post for your blog', 'Hello, I would like to write a guest post for you.');
  t.notMatch(raw, /message-id/i, 'the message has no Message-Id');

  const first = await transport.sendMail({ envelope, raw });
  const retry = await transport.sendMail({ envelope, raw });
  t.same(first.accepted, [tenant.forwardingAddress]);
  t.same(retry.accepted, [tenant.forwardingAddress], 'the retry is accepted too (250), as a duplicate');
  t.equal((await eventsOfType(app.services, 'MessageIngested')).length, 1, 'one ingestion');

  const other = rawMail(tenant.forwardingAddress, 'A guest post for your blog', 'A different message with the same subject.');
  await transport.sendMail({ envelope, raw: other });
  t.equal((await eventsOfType(app.services, 'MessageIngested')).length, 2, 'a different message is a new ingestion');
});
