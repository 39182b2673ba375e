import { readFileSync } from 'node:fs';
import t from 'tap';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { envelopes, startMailboxHarness } from './helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/deliveryReports/${name}`, import.meta.url));

/**
 * A bounce (RFC 3464 DSN) and a complaint (RFC 5965 ARF) arrive on the forwarding mailbox, where
 * mail sent before bounce addresses (bounceAddress.smtp.test.ts) returns its bounces, through a
 * real SMTP client: each contact goes on the
 * team's suppression list and subscribers hear `outreach.contact_suppressed`; nothing is ingested.
 */
t.test('bounce DSN and ARF complaint through the SMTP listener suppress the contact', async (t) => {
  const { a, services, transport } = await startMailboxHarness(t);
  // The two contacts the reports name wrote to the site, and the agent answered each: the reports return those answers.
  const answered = new Map<string, string>();
  for (const from of ['jane.doe@prospect.test', 'Priya.Shah@yahoo.test']) {
    const conversationId = (await ingest(a.h.app.fastify, a.h.tenant, { ...PITCH, from })).json().conversationIds[0];
    await a.waitForEvent(conversationId, 'ReplySent');
    answered.set(from.toLowerCase(), a.sink.received.find((m) => m.rcptTo.some((r) => r.toLowerCase() === from.toLowerCase()))!.parsed.messageId!);
  }
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  const returning = (name: string, fixtureId: string, ours: string) => Buffer.from(fixture(name).toString('latin1').replace(fixtureId, ours), 'latin1');
  const ingestedBefore = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length;
  const suppressed = async () => (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'ContactSuppressed').map((e) => (e.data as { email: string }).email);

  // Forged: reports naming the two contacts, but returning no mail the site sent them (the fixtures' own ids).
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: fixture('postfix-user-unknown.eml') });
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: fixture('yahoo-arf-abuse.eml') });
  t.same(await suppressed(), [], 'a report that returns none of our mail to that address suppresses nothing');

  // A DSN has an empty envelope sender (RFC 5321 §4.5.5), as a mail server sends it.
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: returning('postfix-user-unknown.eml', '<reply-01HXYZ@acme-blog.test>', answered.get('jane.doe@prospect.test')!) });
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: returning('yahoo-arf-abuse.eml', '<reply-01HY00@acme-blog.test>', answered.get('priya.shah@yahoo.test')!) });
  await a.receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.contact_suppressed').length === 2, 10_000);
  const data = envelopes(a.receiver, 'outreach.contact_suppressed').map((e) => e.data);
  t.same(data, [
    { email: 'jane.doe@prospect.test', reason: 'bounced', source: 'bounce', upgraded: false },
    { email: 'priya.shah@yahoo.test', reason: 'complained', source: 'complaint', upgraded: false },
  ]);
  const ingestedAfter = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length;
  t.equal(ingestedAfter, ingestedBefore, 'a delivery report is not a pitch');

  // The agent never mails a suppressed address: a pitch from it is paused at ingestion.
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  await makeAgentReady(services, a.h.tenant.siteId);
  const res = await ingest(a.h.app.fastify, a.h.tenant, { ...PITCH, from: 'Jane.Doe@prospect.test' });
  t.match(res.json(), { aiPaused: true, skipReason: 'contact_suppressed' });

  // A report naming an address the site never mailed (forged by anyone who knows the forwarding address): nothing is suppressed.
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: fixture('gmail-no-such-user.eml') });
  t.same(await suppressed(), ['jane.doe@prospect.test', 'priya.shah@yahoo.test'], 'a stranger is not suppressed');

  // A delay notice (4.x.x) is not a bounce: nothing is suppressed.
  await transport.sendMail({ envelope: { from: '', to: [a.h.tenant.forwardingAddress] }, raw: fixture('postfix-delayed.eml') });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(envelopes(a.receiver, 'outreach.contact_suppressed').length, 2);
});
