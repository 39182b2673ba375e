import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { type WebhookDeliveryCommand, deliveriesStream } from '../../src/domain/webhookDelivery.ts';
import { DeliveryLedger } from '../../src/processors/webhookDelivery/deliveryLedger.ts';

function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const ledger = () => new DeliveryLedger(store, 'sub', { checkpoint: () => -1n });
  const disabled: string[] = [];
  /** Accepted when the ledger appended events for the command; the disable shows in those events. */
  const write = async (l: DeliveryLedger, command: WebhookDeliveryCommand) => {
    const events = await l.handle(command);
    for (const e of events) if (e.type === 'SubscriptionAutoDisabled') disabled.push(e.data.subscriptionId);
    return events.length > 0;
  };
  return { store, ledger, disabled, write };
}
const scheduled = (id: string, workerId: string): WebhookDeliveryCommand => ({
  type: 'ScheduleDelivery',
  data: { subscriptionId: 'sub', deliveryId: id, sourcePosition: '1', eventType: 'outreach.reply_sent', webhookId: `w:${id}`, body: '{}', scheduledAt: '2026-01-15T12:00:00.000Z', dueAt: 0, workerId },
});
const failed = (id: string): WebhookDeliveryCommand => ({
  type: 'RecordAttempt',
  data: {
    subscriptionId: 'sub',
    deliveryId: id,
    attempt: 1,
    outcome: { status: 'http_500', statusCode: 500, error: null, durationMs: 1 },
    attemptedAt: '2026-01-15T12:00:00.000Z',
    workerId: 'w',
    retry: { maxRetries: 0, baseMs: 10, factor: 2, jitter: 0 },
    random01: 0.5,
  },
});

t.test('two copies claiming the same deliveries: each is taken exactly once', async (t) => {
  const { store, ledger, write } = setup(t);
  const one = ledger();
  const two = ledger();
  const ids = Array.from({ length: 20 }, (_, i) => `e${i}`);
  const results = await Promise.all(ids.flatMap((id) => [write(one, scheduled(id, 'one')), write(two, scheduled(id, 'two'))]));
  for (let i = 0; i < ids.length; i++) t.equal(Number(results[2 * i]) + Number(results[2 * i + 1]), 1, `${ids[i]} claimed once`);
  const stream = await store.readStream(deliveriesStream('sub'));
  t.equal(stream.filter((e) => e.type === 'DeliveryScheduled').length, 20, 'twenty claims in the stream, no duplicates');
});

t.test('the tenth failure in a row is followed by SubscriptionAutoDisabled in the same append; records of ended deliveries are refused', async (t) => {
  const { store, ledger, disabled, write } = setup(t);
  const l = ledger();
  for (let i = 0; i < 10; i++) await write(l, scheduled(`d${i}`, 'w'));
  for (let i = 0; i < 9; i++) t.equal(await write(l, failed(`d${i}`)), true);
  t.same(disabled, [], 'not after nine');
  t.equal(await write(l, failed('d9')), true);
  t.same(disabled, ['sub'], 'disabled at ten');
  const stream = await store.readStream(deliveriesStream('sub'));
  const last = stream.slice(-2);
  t.same(last.map((e) => e.type), ['DeliveryFailed', 'SubscriptionAutoDisabled']);
  t.equal((last[0]!.data as { consecutiveFailures: number }).consecutiveFailures, 10);
  t.equal(await write(l, failed('d9')), false, 'a second outcome for an ended delivery is refused');
  const other = ledger();
  t.equal(await write(other, failed('d3')), false, 'a fresh copy, folding the stream, refuses it too');
});

t.test('the pause that lets records gather after an append does not hold up a claim', async (t) => {
  const { store } = setup(t);
  const l = new DeliveryLedger(store, 'sub', { checkpoint: () => -1n, lingerMs: 3_000 });
  await l.handle(scheduled('first', 'w')); // an append: the ledger now pauses for three seconds
  await new Promise((resolve) => setTimeout(resolve, 50));
  const recordAsked = performance.now();
  const record = l.handle(failed('first')).then(() => performance.now() - recordAsked);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const recordWaited = await Promise.race([record, new Promise<null>((resolve) => setTimeout(() => resolve(null), 300))]);
  t.equal(recordWaited, null, 'a record waits in the pause');
  const started = performance.now();
  await l.handle(scheduled('second', 'w'));
  const claimMs = performance.now() - started;
  t.ok(claimMs < 1_000, `a claim ends the pause at once (${claimMs.toFixed(0)} ms)`);
  t.ok((await record) < 2_500, 'and the waiting record goes with it, before the pause would have ended');
  const stream = await store.readStream(deliveriesStream('sub'));
  t.same(
    stream.map((e) => e.type),
    ['DeliveryScheduled', 'DeliveryAttempted', 'DeliveryFailed', 'DeliveryScheduled'],
    'in the order they were asked for',
  );
});
