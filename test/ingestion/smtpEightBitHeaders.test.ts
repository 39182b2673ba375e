import nodemailer from 'nodemailer';
import t from 'tap';
import { headersAsUtf8 } from '../../src/adapters/mail/eightBitHeaders.ts';
import { readInboundMail } from '../../src/adapters/mail/inboundMail.ts';
import { eventsOfType, startMailboxApp } from './helpers.ts';

/**
 * Old mail clients write a sender's name and a subject as raw 8-bit bytes in the message's charset
 * (Latin-1, windows-1251 …), not encoded and not UTF-8. They are read in the charset the message
 * declares (windows-1252 without one), as mail clients show them; they were U+FFFD before.
 */
const rawMail = (to: string, messageId: string, charset: string | null, name: Buffer, subject: Buffer) =>
  Buffer.concat([
    Buffer.from('From: '),
    name,
    Buffer.from(` <sender@prospect.io>\r\nTo: ${to}\r\nSubject: `),
    subject,
    Buffer.from(`\r\nMessage-ID: <${messageId}>\r\nDate: Thu, 15 Jan 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\n`),
    Buffer.from(charset ? `Content-Type: text/plain;\r\n charset="${charset}"\r\nContent-Transfer-Encoding: 8bit\r\n` : ''),
    Buffer.from('\r\nHello, I would like to suggest a link for your article.\r\n'),
  ]);

t.test('raw 8-bit header bytes that are not UTF-8 are read in the charset the message declares', async (t) => {
  const { app, tenant, mailbox } = await startMailboxApp(t);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  const envelope = { from: 'sender@prospect.io', to: [tenant.forwardingAddress] };
  const cases = [
    { id: 'latin1@prospect.io', charset: 'iso-8859-1', name: Buffer.from('J\xf6rg M\xfcller', 'latin1'), subject: Buffer.from('Gr\xfc\xdfe und ein Link', 'latin1'), expected: ['Jörg Müller', 'Grüße und ein Link'] },
    { id: 'cp1251@prospect.io', charset: 'windows-1251', name: Buffer.from([0xc8, 0xe2, 0xe0, 0xed]), subject: Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), expected: ['Иван', 'Привет'] },
    { id: 'none@prospect.io', charset: null, name: Buffer.from('Ren\xe9', 'latin1'), subject: Buffer.from('Caf\xe9 links', 'latin1'), expected: ['René', 'Café links'] },
    { id: 'utf8@prospect.io', charset: 'utf-8', name: Buffer.from('Jörg', 'utf8'), subject: Buffer.from('Grüße', 'utf8'), expected: ['Jörg', 'Grüße'] },
  ];
  for (const c of cases) {
    const sent = await transport.sendMail({ envelope, raw: rawMail(tenant.forwardingAddress, c.id, c.charset, c.name, c.subject) });
    t.same(sent.accepted, [tenant.forwardingAddress], c.id);
  }
  const ingested = await eventsOfType(app.services, 'MessageIngested');
  for (const c of cases) {
    const event = ingested.find((e) => (e.data as { externalMessageId: string }).externalMessageId === c.id);
    const data = event?.data as { fromName: string; subject: string } | undefined;
    t.same([data?.fromName, data?.subject], c.expected, `${c.charset ?? 'no charset'}: the name and the subject as written`);
  }
});

t.test('the charset is found in linear time, only an ASCII-compatible one is used, a mail with no header section is left alone', async (t) => {
  // A Content-Type folded over many lines without a charset: one pattern over the folded lines took 18 s at 32 folds.
  const folded = Buffer.from(`From: J\xe9 <j@example.de>\r\nSubject: x\r\nContent-Type: text/plain${';\r\n a=b'.repeat(40)}\r\n\r\nbody\r\n`, 'latin1');
  const started = performance.now();
  const mail = await readInboundMail(new Uint8Array(folded), false);
  t.ok(performance.now() - started < 2_000, `40 folds read in ${Math.round(performance.now() - started)} ms`);
  t.match(mail, { kind: 'message', message: { fromName: 'Jé' } });

  const utf16 = Buffer.from('From: J\xe9 <j@example.de>\r\nSubject: x\r\nMessage-ID: <u@v>\r\nContent-Type: text/plain; charset="utf-16"\r\n\r\nbody\r\n', 'latin1');
  t.match(await readInboundMail(new Uint8Array(utf16), false), { kind: 'message', message: { from: 'j@example.de', fromName: 'Jé', messageId: '<u@v>' } }, 'a UTF-16 label: windows-1252');

  for (const raw of ['\r\nCaf\xe9 line\r\n\r\nmore', '\nCaf\xe9 line\n\nmore']) {
    const bytes = Buffer.from(raw, 'latin1');
    t.ok(headersAsUtf8(bytes).equals(bytes), `${JSON.stringify(raw.slice(0, 2))} first: no header section, nothing rewritten`);
  }
});
