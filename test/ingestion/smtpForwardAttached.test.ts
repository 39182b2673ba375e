import nodemailer from 'nodemailer';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, eventsOfType } from './helpers.ts';

/**
 * "Forward as attachment" (Gmail, Outlook, Thunderbird) sends the pitch as a message/rfc822 part: its
 * sender and text are read as an inline forward's block is, under the same rule (only a member of
 * the site's team forwards).
 */
const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
t.teardown(() => app.close());
const { services } = app;
const tenant = await createTenant(services);
const mailbox = await startForwardingMailbox(services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024 });
t.teardown(() => mailbox.close());
const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
t.teardown(() => transport.close());

const pitchEml = (body: { text?: string; html?: string }, from: string | null = `"${PITCH.fromName}" <${PITCH.from}>`) =>
  [
    ...(from === null ? [] : [`From: ${from}`]),
    'To: editor@example.test',
    `Subject: ${PITCH.subject}`,
    'Date: Mon, 23 Nov 2026 10:00:00 +0000',
    'Message-ID: <pitch-1@prospect.io>',
    'MIME-Version: 1.0',
    `Content-Type: ${body.html ? 'text/html' : 'text/plain'}; charset=utf-8`,
    '',
    body.html ?? body.text ?? '',
    '',
  ].join('\r\n');
/** nodemailer marks a message/rfc822 part `inline`; Gmail and Outlook send it as `attachment`. */
const forwardAttached = (from: string, messageId: string, eml: string, contentDisposition: 'inline' | 'attachment' = 'inline', note = 'FYI, see the attached pitch.') =>
  transport.sendMail({
    from,
    to: tenant.forwardingAddress,
    subject: `Fwd: ${PITCH.subject}`,
    messageId,
    text: note,
    attachments: [{ filename: 'pitch.eml', content: eml, contentType: 'message/rfc822', contentDisposition }],
  });
const lastIngested = async () => (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as Record<string, unknown>;

t.test("a team member's forward as attachment: the prospect is the attached mail's sender, its text is the pitch's", async (t) => {
  const info = await forwardAttached('Owner <owner@example.test>', '<fwd-att-1@example.test>', pitchEml({ text: PITCH.bodyText }));
  t.same(info.accepted, [tenant.forwardingAddress]);
  const ingested = await lastIngested();
  t.match(ingested, { siteId: tenant.siteId, channel: 'smtp', from: PITCH.from, fromName: PITCH.fromName, externalMessageId: 'fwd-att-1@example.test', forwarded: true });
  t.match(ingested.bodyText, /FYI, see the attached pitch\.[\s\S]*Forwarded message[\s\S]*Subject: Quick link suggestion[\s\S]*schema markup/);
});

t.test("an attached pitch (disposition attachment) with an HTML body only: its text is derived from the HTML", async (t) => {
  await forwardAttached('owner@example.test', '<fwd-att-2@example.test>', pitchEml({ html: '<p>Hello from <b>Jane</b>: a guest post on schema markup?</p>' }, 'Jane Two <jane2@prospect.io>'), 'attachment');
  const ingested = await lastIngested();
  t.match(ingested, { from: 'jane2@prospect.io', fromName: 'Jane Two', forwarded: true });
  t.match(ingested.bodyText, /Hello from Jane: a guest post on schema markup\?/);
});

t.test('anyone else attaching a mail is the sender of their own mail', async (t) => {
  await forwardAttached('Stranger <someone@elsewhere.io>', '<fwd-att-3@elsewhere.io>', pitchEml({ text: 'Please answer my friend.' }, 'Friend <friend@victim.io>'));
  const ingested = await lastIngested();
  t.match(ingested, { from: 'someone@elsewhere.io', fromName: 'Stranger', externalMessageId: 'fwd-att-3@elsewhere.io' });
  t.equal(ingested.forwarded ?? false, false);
});

t.test("the attached pitch's sender is its parsed From: a name or subject with a line separator names no one else", async (t) => {
  // A name that decodes to a line separator and a From line of its author's choosing.
  const name = `=?UTF-8?B?${Buffer.from('Jane\u2028From: Victim <victim@third.party>\u2029').toString('base64')}?=`;
  const subject = `=?UTF-8?B?${Buffer.from('Hello\u2028From: Victim <victim@third.party>').toString('base64')}?=`;
  const eml = pitchEml({ text: 'A guest post?' }, `${name} <jane4@prospect.io>`).replace(`Subject: ${PITCH.subject}`, `Subject: ${subject}`);
  await forwardAttached('owner@example.test', '<fwd-att-4@example.test>', eml);
  const ingested = await lastIngested();
  t.match(ingested, { from: 'jane4@prospect.io', forwarded: true });

  // No From in the attached mail: its body's From line names no one; the forwarder is the sender.
  await forwardAttached('owner@example.test', '<fwd-att-5@example.test>', pitchEml({ text: '---------- Forwarded message ---------\nFrom: Victim <victim@third.party>\n\nHi' }, null));
  t.match(await lastIngested(), { from: 'owner@example.test', externalMessageId: 'fwd-att-5@example.test' });
  t.equal((await lastIngested()).forwarded ?? false, false);
});

t.test('an inline forward and an attached mail naming different senders: neither is taken, the forwarder is the sender', async (t) => {
  // A stranger's pitch forwarded inline by the editor, the stranger's attached mail "from" a third party.
  const note = 'FYI\n\n---------- Forwarded message ---------\nFrom: Stranger <s@stranger.io>\nSubject: Pitch\n\nSee my attached mail.';
  await forwardAttached('owner@example.test', '<fwd-att-6@example.test>', pitchEml({ text: 'Hello' }, 'Victim <victim@third.party>'), 'attachment', note);
  t.match(await lastIngested(), { from: 'owner@example.test', externalMessageId: 'fwd-att-6@example.test' });
  t.equal((await lastIngested()).forwarded ?? false, false);
  // The same sender in both: taken.
  const same = 'FYI\n\n---------- Forwarded message ---------\nFrom: Jane Seven <jane7@prospect.io>\n\nSee attached.';
  await forwardAttached('owner@example.test', '<fwd-att-7@example.test>', pitchEml({ text: 'Hello' }, 'Jane Seven <jane7@prospect.io>'), 'attachment', same);
  t.match(await lastIngested(), { from: 'jane7@prospect.io', forwarded: true });
});

t.test('an attached mail whose From is no address names no one: the forward is taken from the forwarder', async (t) => {
  const info = await forwardAttached('owner@example.test', '<fwd-att-8@example.test>', pitchEml({ text: 'Hello' }, '"Jane" <not-an-address>'));
  t.same(info.accepted, [tenant.forwardingAddress], 'accepted, not refused 550');
  t.match(await lastIngested(), { from: 'owner@example.test', externalMessageId: 'fwd-att-8@example.test' });
});
