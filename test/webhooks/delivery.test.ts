import t from 'tap';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/eventCatalog.ts';
import { bearer } from '../helpers/testApp.ts';
import { independentlyVerify, sampleEvents, startHarness, startReceiver } from './helpers.ts';

const DATA_FIELDS: Record<string, string[]> = {
  'outreach.opportunity_created': ['opportunityId', 'conversationId', 'entrySource'],
  'outreach.message_received': ['conversationId', 'opportunityId', 'messageId', 'entrySource'],
  'outreach.reply_sent': ['conversationId', 'messageId', 'mailProviderMessageId', 'triage', 'autoResolved', 'sendOutcome'],
  'outreach.conversation_status_changed': ['conversationId', 'oldStatus', 'newStatus', 'resolvedBy', 'resolutionOutcome'],
  'outreach.contact_suppressed': ['email', 'reason', 'source', 'upgraded'],
};

t.test('all five event types arrive signed, with the exact envelope and headers', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, [...WEBHOOK_EVENT_TYPES]);
  const events = sampleEvents(h.tenant);
  for (const e of events) await h.append(e);
  await receiver.waitFor((r) => r.length >= 5);

  t.equal(receiver.received.length, 5, 'one POST per event');
  for (const r of receiver.received) {
    const type = r.json.type as string;
    t.ok(independentlyVerify(r, sub.secret), `${type}: signature verifies with the subscription secret`);
    t.notOk(independentlyVerify(r, sub.secret + 'x'), `${type}: and not with another secret`);
    const sig = String(r.headers['service-signature']);
    const ts = Number(/^t=(\d+),/.exec(sig)![1]);
    t.ok(Math.abs(ts - Date.now() / 1000) < 30, 'signature timestamp is current unix seconds');
    t.equal(r.headers['service-event'], type, 'Service-Event names the type');
    t.match(r.headers['content-type'], /^application\/json/);
    t.same(Object.keys(r.json).sort(), ['data', 'id', 'siteId', 'teamId', 'timestamp', 'type'], 'envelope fields');
    t.equal(r.json.siteId, h.tenant.siteId);
    t.equal(r.json.teamId, h.tenant.teamId);
    t.ok(Number.isInteger(r.json.timestamp) && r.json.timestamp > 1_600_000_000_000, 'timestamp in epoch ms');
    t.match(r.json.id, new RegExp(`^${type.replace('.', '\\.')}:${r.json.timestamp}:[A-Za-z0-9]+$`), 'id shaped <type>:<timestamp>:<suffix>');
    t.same(Object.keys(r.json.data).sort(), [...DATA_FIELDS[type]!].sort(), `${type}: exactly the spec's data fields`);
  }
  const byType = Object.fromEntries(receiver.received.map((r) => [r.json.type, r.json.data]));
  t.same(byType['outreach.reply_sent'], { conversationId: 'conv_1', messageId: 'msg_2', mailProviderMessageId: '<abc@mail.example>', triage: 'accept', autoResolved: true, sendOutcome: 'sent' });
  t.same(byType['outreach.contact_suppressed'], { email: 'pitch@prospect.example', reason: 'opted_out', source: 'inbound_classifier', upgraded: false });
  t.equal(byType['outreach.conversation_status_changed'].newStatus, 'resolved');
  t.same(new Set(receiver.received.map((r) => r.json.type)), new Set(WEBHOOK_EVENT_TYPES));

  // The subscription read model shows the last delivery.
  await h.app.services.projections.waitFor(await h.app.services.events.headPosition(), 5_000);
  const list = await h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks`, headers: bearer(h.tenant.key) });
  const listed = list.json().subscriptions[0];
  t.equal(listed.last_delivery_status, 'ok');
  t.equal(listed.consecutive_failures, 0);
  t.ok(listed.last_delivery_at && !Number.isNaN(Date.parse(listed.last_delivery_at)));
});

t.test('a receiver subscribed to some types gets only those; other sites get nothing', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const only = await startReceiver();
  const all = await startReceiver();
  t.teardown(() => only.close());
  t.teardown(() => all.close());
  await h.subscribe(only.url, ['outreach.reply_sent', 'outreach.contact_suppressed']);
  await h.subscribe(all.url, [...WEBHOOK_EVENT_TYPES]);
  for (const e of sampleEvents({ siteId: 'another-site', teamId: h.tenant.teamId })) await h.append(e);
  for (const e of sampleEvents(h.tenant)) await h.append(e);
  await all.waitFor((r) => r.length >= 5);
  await only.waitFor((r) => r.length >= 2);
  await new Promise((r) => setTimeout(r, 200));
  t.same(only.received.map((r) => r.json.type).sort(), ['outreach.contact_suppressed', 'outreach.reply_sent']);
  t.equal(all.received.length, 5, 'events of another site are not delivered');
  t.ok(all.received.every((r) => r.json.siteId === h.tenant.siteId));
});

t.test('events appended before a subscription existed are not delivered to it', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const [before, after] = [sampleEvents(h.tenant)[0]!, sampleEvents(h.tenant)[1]!];
  const p = await h.append(before);
  await h.worker.waitForPosition(p, 5_000);
  await h.subscribe(receiver.url, [...WEBHOOK_EVENT_TYPES]);
  await h.append(after);
  await receiver.waitFor((r) => r.length >= 1);
  await new Promise((r) => setTimeout(r, 150));
  t.same(receiver.received.map((r) => r.json.type), ['outreach.message_received']);
});

t.test('several worker copies share the work without taking an event twice', async (t) => {
  const h = await startHarness({ worker: { workerId: 'copy-1' } });
  t.teardown(() => h.close());
  const { WebhookDeliveryWorker, workerOptionsFrom } = await import('../../src/processors/webhookDelivery/worker.ts');
  const second = new WebhookDeliveryWorker(h.app.services, { ...workerOptionsFrom(h.app.config), workerId: 'copy-2' });
  await second.start();
  t.teardown(() => second.stop());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  const { messageReceived } = await import('./helpers.ts');
  await Promise.all(Array.from({ length: 100 }, (_, i) => h.append(messageReceived(h.tenant, 1000 + i))));
  await receiver.waitFor((r) => new Set(r.map((x) => x.json.id)).size >= 100, 20_000);
  await new Promise((r) => setTimeout(r, 300));
  const log = await h.app.services.events.readAll({ limit: 100_000 });
  const claims = log.filter((e) => e.type === 'DeliveryScheduled').map((e) => e.data as { deliveryId: string; workerId: string });
  t.equal(new Set(claims.map((c) => c.deliveryId)).size, 100, 'one claim per event');
  t.equal(claims.length, 100, 'no event claimed twice by the two copies');
  // A second receipt is legitimate only as the retry of an attempt recorded as failed (at-least-once:
  // on a loaded machine an answer can miss the timeout); without failures, exactly once.
  const failedAttempts = log.filter((e) => e.type === 'DeliveryAttempted' && (e.data as { status: string }).status !== 'ok').length;
  t.ok(receiver.received.length <= 100 + failedAttempts, `each event delivered once, plus at most one retry per failed attempt (${receiver.received.length} received, ${failedAttempts} failed attempts)`);
  const workers = new Set(claims.map((c) => c.workerId));
  t.ok(workers.size >= 1, `claims made by ${[...workers].join(', ')}`);
});

t.test('an ingestion through the API reaches subscribers as opportunity_created and message_received', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.opportunity_created', 'outreach.message_received']);
  const res = await h.app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${h.tenant.siteId}/outreach/inbox/messages`,
    headers: bearer(h.tenant.key),
    payload: { from: 'pitch@prospect.example', subject: 'Guest post', bodyText: 'Hello', runExtraction: false },
  });
  t.equal(res.statusCode, 201, 'ingested');
  await receiver.waitFor((r) => r.length >= 2);
  const types = receiver.received.map((r) => r.json.type).sort();
  t.same(types, ['outreach.message_received', 'outreach.opportunity_created']);
  const body = res.json();
  for (const r of receiver.received) {
    t.ok(independentlyVerify(r, sub.secret));
    t.equal(r.json.data.conversationId, body.conversationIds[0]);
    t.equal(r.json.data.opportunityId, body.opportunityIds[0]);
    t.equal(r.json.data.entrySource, 'direct_inbound_external');
  }
});
