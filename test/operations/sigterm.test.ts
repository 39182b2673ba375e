import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { createTenant } from '../helpers/testApp.ts';
import { startServerProcess } from '../helpers/serverProcess.ts';
import { startReceiver, testCertificate } from '../webhooks/helpers.ts';

t.setTimeout(300_000);

/**
 * The real server (`node --import tsx src/server.ts`) gets SIGTERM while ingestions stream in and
 * deliveries are under way (the receiver answers slowly). It exits 0; after a restart every
 * ingestion that was answered 2xx is in the log, and every message it produced reaches the HTTPS
 * receiver at least once.
 */
t.test('SIGTERM under load: exit 0, no answered ingestion lost, every event delivered after the restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-sigterm-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { caFile } = await testCertificate();
  const env = {
    DATA_DIR: dataDir,
    WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
    WEBHOOK_EXTRA_CA_FILE: caFile,
    WEBHOOK_RETRY_BASE_MS: '500',
    WEBHOOK_TIMEOUT_MS: '5000',
    WRITE_RATE_LIMIT_PER_MINUTE: '100000',
    SHUTDOWN_TIMEOUT_MS: '8000',
  };
  // Every seventh first attempt fails, so retries are pending (durable, on timers) at the signal.
  const seen = new Set<string>();
  const receiver = await startReceiver((r) => {
    const id = String(r.json.id);
    const first = !seen.has(id);
    seen.add(id);
    return first && seen.size % 7 === 0 ? 503 : 200;
  });
  t.teardown(() => receiver.close());

  const setup = await createServices(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  setup.projections.start();
  const tenant = await createTenant(setup);
  await createSubscription(setup, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'sigterm', url: receiver.url, eventTypes: ['outreach.message_received'], createdByOauthClientId: null });
  await setup.close();

  let server = await startServerProcess(env);
  t.teardown(() => server.kill());
  const ingest = async (n: number) => {
    try {
      const res = await fetch(`${server.url}/api/v1/sites/${tenant.siteId}/outreach/inbox/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: `prospect${n}@example.org`, subject: `Pitch ${n}`, bodyText: `Guest post idea number ${n}`, runExtraction: false }),
      });
      return { n, status: res.status, body: res.status < 300 ? ((await res.json()) as { conversationIds: string[] }) : null };
    } catch {
      return { n, status: 0, body: null };
    }
  };

  // Ingestions keep coming in waves of 8 until and after the signal.
  const answers: Array<Awaited<ReturnType<typeof ingest>>> = [];
  let n = 0;
  let signalled = false;
  const load = (async () => {
    while (!signalled || n < 400) {
      const wave = await Promise.all(Array.from({ length: 8 }, () => ingest(++n)));
      answers.push(...wave);
      if (signalled && wave.every((a) => a.status === 0)) break;
    }
  })();
  while (answers.filter((a) => a.status === 201).length < 40) await new Promise((r) => setTimeout(r, 20));
  server.child.kill('SIGTERM');
  signalled = true;
  const exit = await server.exited;
  await load;
  t.equal(exit.code, 0, `exit code 0 after SIGTERM (signal ${exit.signal})\n${server.output().slice(-2000)}`);
  t.match(server.output(), /shut down/, 'the shutdown sequence ran to its end');

  const accepted = answers.filter((a) => a.status >= 200 && a.status < 300);
  t.ok(accepted.length >= 40, `${accepted.length} ingestions answered 2xx`);
  t.notOk(answers.some((a) => a.status >= 500 && a.status !== 503), 'no 5xx but 503 while closing');

  server = await startServerProcess(env);
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  t.teardown(() => store.close());
  const log = await store.readAll({ limit: 1_000_000 });
  const received = log.filter((e) => e.type === 'MessageReceived' && (e.data as { siteId: string }).siteId === tenant.siteId);
  const conversationsInLog = new Set(received.map((e) => (e.data as { conversationId: string }).conversationId));
  const lost = accepted.filter((a) => !a.body!.conversationIds.every((id) => conversationsInLog.has(id)));
  t.same(lost.map((a) => a.n), [], 'every 2xx ingestion is in the log');

  const messageIds = received.map((e) => (e.data as { messageId: string }).messageId);
  await receiver.waitFor((r) => {
    const got = new Set(r.map((x) => x.json.data?.messageId));
    return messageIds.every((id) => got.has(id));
  }, 120_000).catch(() => {});
  const got = new Set(receiver.received.map((x) => x.json.data?.messageId));
  t.same(messageIds.filter((id) => !got.has(id)), [], `every one of the ${messageIds.length} messages delivered at least once`);

  server.child.kill('SIGTERM');
  t.equal((await server.exited).code, 0, 'the restarted server shuts down cleanly too');
});
