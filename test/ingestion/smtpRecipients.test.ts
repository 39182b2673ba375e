import t from 'tap';
import { changeSiteSettings, setTeamBillingStatus } from '../../src/commands/tenancy.ts';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { eventsOfType } from './helpers.ts';
import { RawSmtp } from './rawSmtp.ts';

/**
 * From an audit of the forwarding mailbox: one message for several teams' sites (relays put the
 * recipients of one MX in one transaction) must not let one site decide another's copy, and two
 * different mails whose Message-Id is empty or not an id must not be merged as one.
 */
t.test('recipients are decided per site; broken Message-Ids fall back to the content key', async (t) => {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const { services } = app;
  const [a, unlicensed, unpaid] = [await createTenant(services), await createTenant(services), await createTenant(services)];
  await changeSiteSettings(services, { siteId: unlicensed.siteId, changes: { licensed: false } });
  await setTeamBillingStatus(services, { teamId: unpaid.teamId, billingStatus: 'past_due' });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  const refused: { teamId: string; siteId: string; code: string }[] = [];
  const mailbox = await startForwardingMailbox(services, {
    host: '127.0.0.1',
    port: 0,
    mailDomain: 'inbound.test',
    maxMessageBytes: 1024 * 1024,
    onCopyRefused: ({ teamId, siteId, code }) => refused.push({ teamId, siteId, code }),
  });
  t.teardown(() => mailbox.close());
  const ingestedFor = async (siteId: string) => (await eventsOfType(services, 'MessageIngested')).filter((e) => (e.data as { siteId: string }).siteId === siteId);

  const send = async (rcpts: string[], messageId: string, body: string, expectRcpt: RegExp[] = rcpts.map(() => /^250/)) => {
    const smtp = await RawSmtp.open(mailbox.port);
    t.teardown(() => smtp.close());
    t.match(await smtp.cmd('EHLO sender.test'), /^250/);
    t.match(await smtp.cmd('MAIL FROM:<jane@prospect.io>'), /^250/);
    for (const [i, rcpt] of rcpts.entries()) t.match(await smtp.cmd(`RCPT TO:<${rcpt}>`), expectRcpt[i]!, `RCPT ${i}`);
    t.match(await smtp.cmd('DATA'), /^354/);
    const end = smtp.reply();
    await smtp.write(`From: Jane <jane@prospect.io>\r\nTo: x@inbound.test\r\nSubject: Guest post\r\nMessage-ID: ${messageId}\r\n\r\n${body}\r\n.\r\n`);
    return end;
  };

  // An unlicensed site is refused at RCPT, for its address only; the other team's copy is taken.
  t.match(await send([unlicensed.forwardingAddress, a.forwardingAddress], '<multi-1@prospect.io>', 'Hello, a link idea.', [/^550 5\.7\.1/, /^250/]), /^250 /);
  t.equal((await ingestedFor(a.siteId)).length, 1, "the licensed site's copy is ingested");
  t.equal((await ingestedFor(unlicensed.siteId)).length, 0);

  // A team whose subscription is unpaid is found after DATA: its copy is refused, the other taken, and the answer is 250.
  t.match(await send([unpaid.forwardingAddress, a.forwardingAddress], '<multi-2@prospect.io>', 'Another link idea.'), /^250 /);
  t.equal((await ingestedFor(a.siteId)).length, 2);
  t.equal((await ingestedFor(unpaid.siteId)).length, 0);
  t.same(refused, [{ teamId: unpaid.teamId, siteId: unpaid.siteId, code: 'PAYMENT_REQUIRED' }], 'the refused copy is reported (npm start logs it), though the sender heard 250');
  // Alone, the unpaid site's refusal is the answer.
  t.match(await send([unpaid.forwardingAddress], '<multi-3@prospect.io>', 'A third idea.'), /^550 5\.7\.1/);

  // Two different mails with `Message-ID: <>`, and two with UTF-8 ids that differ in one letter: four mails, not two.
  for (const [id, body] of [['<>', 'first'], ['<>', 'second'], ['<\u00ffx@p.example>', 'third'], ['<\u00fex@p.example>', 'fourth']] as const) {
    t.match(await send([a.forwardingAddress], id, `Mail ${body}.`), /^250 /);
  }
  const stored = (await ingestedFor(a.siteId)).map((e) => e.data as { bodyText: string; externalMessageId: string | null });
  t.equal(stored.length, 6, 'each different mail is ingested');
  t.same(stored.slice(2).map((m) => m.externalMessageId), [null, null, '\u00ffx@p.example', '\u00fex@p.example'], '`<>` is no Message-Id; UTF-8 ids are kept as REST keeps them');

  // Empty threading headers, and threading headers in forms mail clients write: taken as before (a review found the first answered 451 for ever).
  const raw = async (headers: string, body: string) => {
    const smtp = await RawSmtp.open(mailbox.port);
    t.teardown(() => smtp.close());
    t.match(await smtp.cmd('EHLO sender.test'), /^250/);
    t.match(await smtp.cmd('MAIL FROM:<jane@prospect.io>'), /^250/);
    t.match(await smtp.cmd(`RCPT TO:<${a.forwardingAddress}>`), /^250/);
    t.match(await smtp.cmd('DATA'), /^354/);
    const end = smtp.reply();
    await smtp.write(`From: Jane <jane@prospect.io>\r\nSubject: Guest post\r\n${headers}\r\n${body}\r\n.\r\n`);
    return end;
  };
  t.match(await raw('Message-ID: <empty-refs@prospect.io>\r\nIn-Reply-To: \r\nReferences: \r\n', 'Empty threading headers.'), /^250 /);
  t.match(await raw("Message-ID: <ü-1@exämple.test>\r\nIn-Reply-To: <x1@site.test> (Jane's message)\r\nReferences: <r1@x.test>,<r2@site.test>\r\n", 'Threading forms.'), /^250 /);
  const last = (await ingestedFor(a.siteId)).slice(-2).map((e) => e.data as { externalMessageId: string | null; inReplyTo: string | null; references: string | null });
  t.equal(last[0]!.externalMessageId, 'empty-refs@prospect.io');
  t.equal(last[1]!.externalMessageId, 'ü-1@exämple.test', 'a UTF-8 Message-Id is kept, as REST keeps one');
  t.match(last[1]!.inReplyTo, /x1@site\.test/, 'In-Reply-To with a comment keeps its id');
  t.match(last[1]!.references, /r1@x\.test.*r2@site\.test/, 'comma-separated References keep their ids');
});

t.test("a client gone mid-message is its connection's failure, not the mailbox's: nothing logged as an error", async (t) => {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const errors: unknown[] = [];
  const clientErrors: unknown[] = [];
  const mailbox = await startForwardingMailbox(app.services, {
    host: '127.0.0.1',
    port: 0,
    mailDomain: 'inbound.test',
    maxMessageBytes: 1024 * 1024,
    onError: (e) => errors.push(e),
    onClientError: (e) => clientErrors.push(e),
  });
  t.teardown(() => mailbox.close());
  const smtp = await RawSmtp.open(mailbox.port);
  t.match(await smtp.cmd('EHLO sender.test'), /^250/);
  t.match(await smtp.cmd('MAIL FROM:<jane@prospect.io>'), /^250/);
  t.match(await smtp.cmd(`RCPT TO:<${tenant.forwardingAddress}>`), /^250/);
  t.match(await smtp.cmd('DATA'), /^354/);
  await smtp.write('From: Jane <jane@prospect.io>\r\nSubject: half\r\n\r\nHalf a mes');
  smtp.close();
  for (let i = 0; i < 100 && clientErrors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(clientErrors.length >= 1, 'reported as a client-side failure');
  t.same(errors, [], 'not as a failure of the mailbox');
  t.equal((await eventsOfType(app.services, 'MessageIngested')).length, 0, 'nothing stored');
});
