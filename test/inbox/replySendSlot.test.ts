import t, { type Test } from 'tap';
import type { SmtpMailer } from '../../src/adapters/mail/smtpMailer.ts';
import { suppressContact } from '../../src/commands/suppression.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import { expectError } from '../helpers/http.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { startHoldingRelay } from '../agent/smtpSink.ts';
import { act } from './actionsHelpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Six pitches from `<letter>0@prospect0.io`…, and a person's reply to the first five, each held by one of the relay's 5 pool connections. */
async function fiveRepliesHoldingTheRelay(t: Test, letter: string) {
  const relay = await startHoldingRelay();
  t.teardown(() => relay.close());
  const app = await startTestApp({ env: { OUTBOUND_SMTP_URL: relay.url, RUN_AGENT: 'false' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await makeAgentReady(app.services, tenant.siteId);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await ingest(app.fastify, tenant, { ...PITCH, from: `${letter}${i}@prospect${i}.io`, messageId: `<${letter}-${i}@prospect${i}.io>` })).json().conversationIds[0]);
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  const firstFive = ids.slice(0, 5).map((id) => act(app.fastify, tenant, id, 'reply', { text: 'Thanks, we will look at it.' }));
  while (relay.handed.length < 5) await sleep(20);
  return { relay, app, tenant, ids, firstFive };
}

/**
 * Through SMTP a person's reply waits for one of the pool's 5 connections before its attempt is
 * claimed, and reads the mail gate only then: a contact suppressed while it waited is refused, not
 * mailed (from a review: the gate was read before the wait).
 */
t.test("a person's reply waiting for a connection to the relay reads the suppression list after the wait", async (t) => {
  const { relay, app, tenant, ids, firstFive } = await fiveRepliesHoldingTheRelay(t, 'p');
  const sixth = act(app.fastify, tenant, ids[5]!, 'reply', { text: 'Thanks, we will look at it.' });
  const mailer = app.services.mailer as SmtpMailer;
  while (mailer.waitingForConnection < 1) await sleep(20);
  t.equal(relay.recipients.length, 5, 'the sixth waits: every connection holds a reply');
  await suppressContact(app.services, { teamId: tenant.teamId, teamSiteIds: [tenant.siteId], siteId: tenant.siteId, email: 'p5@prospect5.io', reason: 'complained', source: 'complaint' });
  relay.holding = false;
  relay.releaseAll();
  for (const res of await Promise.all(firstFive)) t.equal(res.statusCode, 201);
  expectError(t, await sixth, 409, 'CONTACT_SUPPRESSED', 'the sixth, once a connection was free');
  t.notOk(relay.recipients.includes('p5@prospect5.io'), 'nothing was mailed to the contact suppressed while the reply waited');
});

t.test("a person's reply that finds no free connection within 15 s is answered 503 with Retry-After, and nothing of it is stored", async (t) => {
  const { relay, app, tenant, ids, firstFive } = await fiveRepliesHoldingTheRelay(t, 'q');
  const started = performance.now();
  const sixth = await act(app.fastify, tenant, ids[5]!, 'reply', { text: 'Thanks, we will look at it.' });
  const waited = performance.now() - started;
  expectError(t, sixth, 503, 'SERVICE_UNAVAILABLE', 'every connection stayed busy');
  t.equal(sixth.headers['retry-after'], '1');
  t.ok(waited >= 14_500 && waited < 20_000, `answered after ${Math.round(waited)} ms`);
  const sixthEvents = await app.services.events.readStream(conversationStream(ids[5]!));
  t.notOk(sixthEvents.some((e) => e.type === 'ReplyDrafted'), 'no reply drafted or claimed for it: a retry starts clean');
  relay.holding = false;
  relay.releaseAll();
  for (const res of await Promise.all(firstFive)) t.equal(res.statusCode, 201);
  t.notOk(relay.recipients.includes('q5@prospect5.io'));
});
