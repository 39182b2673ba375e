import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../../src/config.ts';
import { webhookDeliveryEventSchemas } from '../../src/domain/eventSchemas.ts';
import { type DeliveriesState, deliveriesStream, webhookDeliveryDecider } from '../../src/domain/webhookDelivery.ts';
import { parseEvent } from '../../src/lib/parseEvent.ts';
import { createServices } from '../../src/services.ts';
import { createTenant } from '../helpers/testApp.ts';
import { messageReceived, sleep, startReceiver, testCertificate } from './helpers.ts';

/** The subscription's deliveries stream as it is on disk, folded, with its attempt records. */
async function durable(store: SqliteEventStore, subscriptionId: string): Promise<{ state: DeliveriesState; okRecords: Map<string, number> }> {
  let state = webhookDeliveryDecider.initialState();
  const okRecords = new Map<string, number>();
  for (const recorded of await store.readStream(deliveriesStream(subscriptionId))) {
    const event = parseEvent(recorded, webhookDeliveryEventSchemas);
    if (!event) continue;
    state = webhookDeliveryDecider.evolve(state, event);
    if (event.type === 'DeliveryAttempted' && event.data.status === 'ok') okRecords.set(event.data.deliveryId, (okRecords.get(event.data.deliveryId) ?? 0) + 1);
  }
  return { state, okRecords };
}

/**
 * Attempt records are batched: after each durable append the ledger waits (WEBHOOK_RECORD_BATCH_MS)
 * so the next append carries more records. The server is killed with SIGKILL while answered attempts
 * wait in such a batch (not yet durable). After a restart nothing is lost: every delivery whose record
 * was lost is made again with the same id and bytes, every delivery ends recorded as succeeded, and
 * none is recorded twice.
 */
t.test('SIGKILL while attempt records wait in a batch: restart re-sends exactly the unrecorded ones, none is lost', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-batched-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { caFile } = await testCertificate();
  const base = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_EXTRA_CA_FILE: caFile };
  const receiver = await startReceiver(() => 204);
  t.teardown(() => receiver.close());

  const setup = await createServices(loadConfig(base));
  setup.projections.start();
  const tenant = await createTenant(setup);
  const { subscriptionId } = await createSubscription(setup, {
    teamId: tenant.teamId, siteId: tenant.siteId, label: 'batched', url: receiver.url, eventTypes: ['outreach.message_received'], createdByOauthClientId: null,
  });
  await setup.close();

  const start = (env: Record<string, string>): ChildProcess => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, ...base, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('exit', (code, signal) => {
      if (code && code !== 0) t.comment(`server exited ${code} ${signal ?? ''}: ${stderr.slice(0, 2000)}`);
    });
    return child;
  };

  const N = 30;
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  t.teardown(() => store.close());
  // The longest batch window allowed: after each record append, the next records wait in memory for a second.
  let server = start({ WEBHOOK_RECORD_BATCH_MS: '1000' });
  t.teardown(() => void server.kill('SIGKILL'));
  await sleep(1_500);
  const appendEvents = (from: number, to: number) =>
    Promise.all(Array.from({ length: to - from }, (_, j) => store.append(`batched-${from + j}`, [messageReceived(tenant, from + j)].map((e) => ({ type: e.type, data: e.data })), 'any')));
  const unique = () => new Set(receiver.received.map((r) => r.json.id)).size;
  // The first half is delivered and its records get durable (the batch window passes)...
  await appendEvents(0, N / 2);
  await receiver.waitFor(() => unique() >= N / 2, 60_000);
  const firstHalfDurable = Date.now() + 30_000;
  while ((await durable(store, subscriptionId)).okRecords.size < N / 2 && Date.now() < firstHalfDurable) await sleep(100);
  // ...the second half is answered while its records wait in the batch.
  await appendEvents(N / 2, N);
  await receiver.waitFor(() => unique() >= N, 60_000);
  // At least the last answer has not reached its batch yet; others wait in the batch window.
  server.kill('SIGKILL');
  await new Promise((resolve) => server.once('exit', resolve));

  const atKill = await durable(store, subscriptionId);
  t.equal(atKill.state.scheduled.size, N, 'every claim was durable before its attempt');
  const unrecorded = [...atKill.state.pending.keys()];
  t.ok(unrecorded.length > 0, `answered attempts were still waiting in the batch at the kill (${unrecorded.length} of ${N})`);
  t.ok(atKill.okRecords.size >= N / 2, `the first half was durably recorded (${atKill.okRecords.size})`);
  const receivedAtKill = receiver.received.length;

  server = start({ WEBHOOK_RECORD_BATCH_MS: '5' });
  const deadline = Date.now() + 90_000;
  let after = await durable(store, subscriptionId);
  while (after.state.pending.size > 0 && Date.now() < deadline) {
    await sleep(100);
    after = await durable(store, subscriptionId);
  }
  server.kill('SIGKILL');

  t.equal(after.state.pending.size, 0, 'after the restart every delivery has ended');
  t.same([...after.okRecords.values()].filter((n) => n !== 1), [], 'each recorded as succeeded exactly once');
  t.equal(after.okRecords.size, N, 'all of them');
  const resent = receiver.received.slice(receivedAtKill);
  const resentIds = new Set(resent.map((r) => String(r.json.data.messageId)));
  const pendingIds = new Set<string>();
  for (const r of receiver.received.slice(0, receivedAtKill)) {
    const scheduledOf = [...atKill.state.pending.values()].find((p) => p.webhookId === r.json.id);
    if (scheduledOf) pendingIds.add(String(r.json.data.messageId));
  }
  t.same([...resentIds].sort(), [...pendingIds].sort(), 'exactly the deliveries without a durable record were sent again');
  for (const r of resent) {
    const first = receiver.received.find((x) => x.json.id === r.json.id)!;
    t.ok(first.rawBody.equals(r.rawBody), `${r.json.id}: the same bytes again`);
  }
});
