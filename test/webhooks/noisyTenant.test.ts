import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { parseAllowedRanges } from '../../src/domain/destination.ts';
import { deliveriesStream } from '../../src/domain/webhookDelivery.ts';
import { WebhookSender } from '../../src/processors/webhookDelivery/sender.ts';
import { bearer, createTenant } from '../helpers/testApp.ts';
import { webhooksPath } from '../helpers/http.ts';
import { messageReceived, startHarness, startReceiver, testCertificate } from './helpers.ts';

const TIMEOUT_MS = 2_000;
// Timers and a loaded 2-core machine: how late an attempt may end past its bound.
const MARGIN_MS = 300;

/**
 * The margin plus the longest stall of this process's event loop seen while the test ran: a timer
 * cannot fire while the loop is blocked (another test file hogging the cores), so an attempt may end
 * that much later without anything waiting unbounded (the defect these tests catch costs seconds).
 */
function stallAwareMargin(t: Test): () => number {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  t.teardown(() => delay.disable());
  return () => MARGIN_MS + Math.round(delay.max / 1e6);
}

t.test('a destination starved of pooled connections: every attempt ends within the timeout, connection wait included', async (t) => {
  const hang = await startReceiver(() => 'hang');
  t.teardown(() => hang.close());
  const margin = stallAwareMargin(t);
  const { caFile } = await testCertificate();
  const sender = new WebhookSender({ allowed: parseAllowedRanges('127.0.0.0/8'), extraCa: readFileSync(caFile, 'utf8'), timeoutMs: 1_000, connectionsPerOrigin: 4 });
  t.teardown(() => sender.destroy());
  const started = performance.now();
  // 200 attempts for four connections: all but four wait in undici's queue for a connection that frees
  // only when an attempt times out; undici then unwinds the aborted queue slowly (seconds at this size).
  const outcomes = await Promise.all(
    Array.from({ length: 200 }, (_, i) => sender.send(hang.url, Buffer.from(`{"n":${i}}`), { 'content-type': 'application/json' }).then((o) => ({ ...o, endedAt: performance.now() - started }))),
  );
  t.ok(outcomes.every((o) => o.status === 'timeout'), 'every attempt timed out');
  const longest = Math.max(...outcomes.map((o) => o.durationMs));
  const lastEnd = Math.round(Math.max(...outcomes.map((o) => o.endedAt)));
  const bound = margin();
  t.ok(longest <= 1_000 + bound, `every attempt recorded at most 1000 + ${bound} ms (longest ${longest} ms)`);
  t.ok(lastEnd <= 1_000 + bound, `and the last one ended ${lastEnd} ms after they started`);
});

t.test('an attempt that timed out while waiting for a pooled connection is never sent once one frees up', async (t) => {
  const hang = await startReceiver(() => 'hang');
  t.teardown(() => hang.close());
  const { caFile } = await testCertificate();
  const sender = new WebhookSender({ allowed: parseAllowedRanges('127.0.0.0/8'), extraCa: readFileSync(caFile, 'utf8'), timeoutMs: 500, connectionsPerOrigin: 1 });
  t.teardown(() => sender.destroy());
  const [first, queued] = await Promise.all([0, 1].map((n) => sender.send(hang.url, Buffer.from(`{"n":${n}}`), { 'content-type': 'application/json' })));
  t.equal(first!.status, 'timeout', 'the attempt on the connection timed out');
  t.equal(queued!.status, 'timeout', 'and so did the one queued behind it');
  // The first attempt's abort closes the only connection, so the queued one gets a new connection at once.
  await new Promise((r) => setTimeout(r, 1_000));
  t.same(hang.received.map((r) => r.json), [{ n: 0 }], 'the receiver got the first body only: the timed-out one was not sent late');
});

t.test('a noisy team (20 subscriptions to an endpoint that never answers) does not delay another team, and no attempt outlasts the timeout', async (t) => {
  const margin = stallAwareMargin(t);
  const hang = await startReceiver(() => 'hang');
  const healthy = await startReceiver(() => 204);
  const h = await startHarness({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
  t.teardown(async () => {
    await h.close();
    await hang.close();
    await healthy.close();
  });
  const teamA = h.tenant;
  const noisy: string[] = [];
  for (let i = 0; i < 20; i++) noisy.push((await h.subscribe(`${hang.url}?sub=${i}`, ['outreach.message_received'])).id);
  const teamB = await createTenant(h.app.services);
  const created = await h.app.fastify.inject({
    method: 'POST',
    url: webhooksPath(teamB.siteId),
    headers: bearer(teamB.key),
    payload: { label: 'b', url: healthy.url, eventTypes: ['outreach.message_received'] },
  });
  t.equal(created.statusCode, 201, 'team B subscribed');

  // Team B's latency when nothing else is going on.
  const deliverB = async (n: number) => {
    const before = healthy.received.length;
    const at = Date.now();
    await h.append(messageReceived(teamB, n));
    await healthy.waitFor((r) => r.length > before, 15_000);
    return healthy.received[before]!.receivedAt - at;
  };
  const idle = Math.max(await deliverB(1), await deliverB(2));
  t.pass(`idle latency ${idle} ms`);

  // Team A: 16 ingestions, each delivered to its 20 subscriptions (320 deliveries, all hanging).
  for (let n = 0; n < 16; n++) await h.append(messageReceived(teamA, 100 + n));
  await hang.waitFor((r) => r.length >= 16, 5_000);
  const busy = await deliverB(3);
  t.ok(busy <= idle + 1_000, `team B's delivery arrived ${busy} ms after its event while team A's endpoint hangs (idle ${idle} ms)`);

  // Let a few waves of team A's attempts time out and be recorded.
  await new Promise((r) => setTimeout(r, 2 * TIMEOUT_MS + 1_000));
  const late = await deliverB(4);
  t.ok(late <= idle + 1_000, `and still ${late} ms a few timeouts later`);

  const attempts = [];
  for (const id of noisy) for (const e of await h.app.services.events.readStream(deliveriesStream(id))) if (e.type === 'DeliveryAttempted') attempts.push(e.data as { status: string; durationMs: number });
  t.ok(attempts.length >= 32, `${attempts.length} attempts recorded for team A (at least two waves)`);
  const longest = Math.max(...attempts.map((a) => a.durationMs));
  const bound = margin();
  t.ok(longest <= TIMEOUT_MS + bound, `every recorded attempt took at most ${TIMEOUT_MS} + ${bound} ms (longest ${longest} ms)`);
  t.ok(attempts.every((a) => a.status === 'timeout'), 'all recorded as timeout');
});
