import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { createTenant } from '../helpers/testApp.ts';
import { messageReceived, sleep, startReceiver, testCertificate } from './helpers.ts';

/**
 * The real server process (`node --import tsx src/server.ts`) is killed with SIGKILL while
 * deliveries and retries are under way, then started again on the same data directory: every
 * event reaches every matching subscription at least once, always with the same id and bytes.
 */
t.test('SIGKILL mid-deliveries, restart: every event arrives at least once with the same id', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { caFile } = await testCertificate();
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
    WEBHOOK_EXTRA_CA_FILE: caFile,
    WEBHOOK_RETRY_BASE_MS: '1500',
    WEBHOOK_RETRY_FACTOR: '1',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '4',
  };

  // Every fifth first attempt fails, so some retries are pending (durable, in timers) at the kill.
  const firstSeen = new Set<string>();
  const behaviour = (r: { json: Record<string, any> }) => {
    const id = String(r.json.id);
    const first = !firstSeen.has(id);
    firstSeen.add(id);
    return first && Number(String(r.json.data?.messageId).slice(4)) % 5 === 0 ? 500 : 200;
  };
  const a = await startReceiver(behaviour);
  const b = await startReceiver(() => 200);
  t.teardown(() => a.close());
  t.teardown(() => b.close());

  // Tenant and two subscriptions, written through the real commands into the data directory.
  const setup = await createServices(loadConfig(env));
  setup.projections.start();
  const tenant = await createTenant(setup);
  for (const url of [a.url, b.url]) {
    await createSubscription(setup, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'crash', url, eventTypes: ['outreach.message_received'], createdByOauthClientId: null });
  }
  await setup.close();

  const start = (): ChildProcess => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('exit', (code, signal) => {
      if (code && code !== 0) t.comment(`server exited ${code} ${signal ?? ''}: ${stderr.slice(0, 2000)}`);
    });
    return child;
  };

  const N = 120;
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  t.teardown(() => store.close());
  let server = start();
  t.teardown(() => {
    server.kill('SIGKILL');
  });
  for (let i = 0; i < N; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => store.append(`test-crash-${i + j}`, [messageReceived(tenant, i + j)].map((e) => ({ type: e.type, data: e.data })), 'any')));
  }
  const unique = (r: { json: Record<string, any> }[]) => new Set(r.map((x) => x.json.id)).size;
  await a.waitFor((r) => unique(r) >= 20, 60_000);
  server.kill('SIGKILL');
  await new Promise((resolve) => server.once('exit', resolve));
  const atKill = { a: unique(a.received), b: unique(b.received) };
  t.ok(atKill.a < N || atKill.b < N, `killed mid-way (a: ${atKill.a}, b: ${atKill.b} of ${N})`);

  server = start();
  await a.waitFor((r) => unique(r) >= N && r.filter((x) => x.json.data?.messageId && Number(String(x.json.data.messageId).slice(4)) % 5 === 0).length >= 2 * (N / 5), 90_000);
  await b.waitFor((r) => unique(r) >= N, 90_000);
  server.kill('SIGKILL');

  for (const [name, receiver] of [['a', a], ['b', b]] as const) {
    const byId = new Map<string, Buffer>();
    let sameBytes = true;
    for (const r of receiver.received) {
      const prev = byId.get(r.json.id);
      if (prev && !prev.equals(r.rawBody)) sameBytes = false;
      byId.set(r.json.id, r.rawBody);
    }
    const messageIds = new Set([...byId.values()].map((raw) => JSON.parse(raw.toString()).data.messageId));
    t.equal(messageIds.size, N, `${name}: every event arrived at least once`);
    t.ok(sameBytes, `${name}: a repeated id always carried the same bytes`);
    t.equal(byId.size, N, `${name}: one id per event`);
  }
  // The receiver that failed some first attempts got those events a second time, after the restart.
  const retried = a.received.filter((r) => Number(String(r.json.data.messageId).slice(4)) % 5 === 0);
  t.ok(retried.length >= 2 * (N / 5), 'failed first attempts were retried across the crash');
});
