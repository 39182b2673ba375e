import t from 'tap';
import { bearer, startTestApp } from '../helpers/testApp.ts';
import { messageReceived, startHarness, startReceiver } from '../webhooks/helpers.ts';
import { parsePrometheusText, type Family } from './promText.ts';
import { ServiceMetrics } from '../../src/http/metrics.ts';

const value = (f: Family | undefined, labels: Record<string, string>, name = f?.name) =>
  f?.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0) ?? 0;

t.test('GET /metrics: Prometheus text with requests by route template and status, ingestions, deliveries, queue and lags', async (t) => {
  let metrics: ServiceMetrics | undefined;
  const h = await startHarness({ env: { METRICS_TOKEN: 'metrics-token-0123456789' }, worker: { onAttempt: (status) => metrics?.deliveryAttempted(status) } });
  t.teardown(() => h.close());
  metrics = h.app.fastify.metrics;
  metrics.sources.webhooks = h.worker;
  const receiver = await startReceiver((_r, n) => (n === 1 ? 500 : 200));
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.app.services.events.append('test-m', [messageReceived(h.tenant, 1)], 'any');
  await receiver.waitFor((r) => r.length >= 2, 20_000);

  const ingest = (n: number) =>
    h.app.fastify.inject({
      method: 'POST',
      url: `/api/v1/sites/${h.tenant.siteId}/outreach/inbox/messages`,
      headers: bearer(h.tenant.key),
      payload: { from: 'pitch@prospect.example', subject: `Guest post ${n}`, bodyText: 'Hello, may I write a guest post for you?', runExtraction: false },
    });
  const answers = [await ingest(1), await ingest(2)];
  const statuses = answers.map((a) => a.statusCode);
  if (statuses[0] !== 202) t.comment(answers[0]!.body);
  await h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks`, headers: bearer(h.tenant.key) });
  await h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks` });
  await h.app.fastify.inject({ method: 'GET', url: '/no/such/route/12345' });

  const res = await h.app.fastify.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789' } });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusText(res.body);

  const requests = families.get('http_requests_total');
  t.equal(requests?.type, 'counter');
  const route = '/api/v1/sites/:siteId/outreach/webhooks';
  t.equal(value(requests, { method: 'GET', route, status: '200' }), 1, 'by route template, not the raw URL');
  t.equal(value(requests, { method: 'GET', route, status: '401' }), 1, 'and by status');
  t.equal(value(requests, { route: 'unmatched', status: '404' }), 1, 'unknown URLs share one label value');
  t.notOk(res.body.includes(h.tenant.siteId), 'no raw URL (site id) in any label');
  t.notOk(res.body.includes('/no/such/route'), 'no raw unknown URL');

  const duration = families.get('http_request_duration_seconds');
  t.equal(duration?.type, 'histogram');
  t.equal(value(duration, { route, status: '200', le: '+Inf' }, 'http_request_duration_seconds_bucket'), 1, 'latency histogram per route and status');
  t.equal(value(duration, { route, status: '200' }, 'http_request_duration_seconds_count'), 1);

  t.same(statuses, [201, 201], `two ingestions accepted ${statuses}`);
  t.equal(value(families.get('outreach_ingestions_total'), { status: '201' }), 2, 'counted as ingestions');

  const deliveries = families.get('outreach_webhook_delivery_attempts_total');
  t.equal(value(deliveries, { outcome: 'http_5xx' }), 1, 'the failed attempt');
  t.ok(value(deliveries, { outcome: 'ok' }) >= 1, 'the retried attempt that succeeded');

  t.equal(families.get('outreach_webhook_retry_queue_depth')?.type, 'gauge');
  t.equal(families.get('outreach_webhook_retry_queue_depth')?.samples.length, 1);
  const lag = families.get('outreach_projection_lag');
  t.same(new Set(lag?.samples.map((s) => s.labels.projection)), new Set(h.app.services.projections.projections.map((p) => p.name)), 'a lag per projection');
  t.ok(lag?.samples.every((s) => Number.isFinite(s.value) && s.value >= 0));
  t.ok(families.has('outreach_webhook_dispatch_lag'));
  t.ok(families.has('process_cpu_seconds_total'), 'the process metrics too');
});

t.test("a process without a background role reports none of its gauges' samples (a 0 read as caught up or empty)", async (t) => {
  const metrics = new ServiceMetrics({ headPosition: async () => 10n, projectionPositions: () => [['inbox', 10n]] });
  const roleGauges = ['outreach_agent_dispatch_lag', 'outreach_webhook_dispatch_lag', 'outreach_webhook_retry_queue_depth', 'outreach_webhook_deliveries_held'];
  const samples = async () => {
    const families = parsePrometheusText(await metrics.registry.metrics());
    return Object.fromEntries(roleGauges.map((name) => [name, families.get(name)?.samples.map((s) => s.value) ?? null]));
  };
  t.same(await samples(), Object.fromEntries(roleGauges.map((name) => [name, []])), 'declared, without a sample');
  metrics.sources.agent = { position: 7n };
  t.same((await samples())['outreach_agent_dispatch_lag'], [3], 'the agent in this process: its lag');
  t.same((await samples())['outreach_webhook_dispatch_lag'], [], 'still no delivery worker');
  metrics.sources.webhooks = { position: 10n, queue: { waitingForRetry: 2, held: 5, inFlight: 1 } };
  const both = await samples();
  t.same([both['outreach_webhook_dispatch_lag'], both['outreach_webhook_retry_queue_depth'], both['outreach_webhook_deliveries_held']], [[0], [2], [5]]);
  delete metrics.sources.agent;
  t.same((await samples())['outreach_agent_dispatch_lag'], [], 'gone again once the source is');
});

t.test('/metrics with METRICS_TOKEN: 401 without or with a wrong bearer token', async (t) => {
  const app = await startTestApp({ env: { METRICS_TOKEN: 'metrics-token-0123456789' } });
  t.teardown(() => app.close());
  for (const authorization of [undefined, 'Bearer wrong', 'Bearer metrics-token-012345678', 'metrics-token-0123456789']) {
    const res = await app.fastify.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
    t.equal(res.statusCode, 401, `refused: ${authorization}`);
    t.equal(res.json().error.code, 'UNAUTHORIZED');
  }
  for (const authorization of ['bearer metrics-token-0123456789', 'Bearer  metrics-token-0123456789']) {
    const res = await app.fastify.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
    t.equal(res.statusCode, 200, `the scheme in any case, spaces after it: ${authorization}`);
  }
});

t.test('/metrics without METRICS_TOKEN answers loopback callers only', async (t) => {
  const app = await startTestApp({ listen: true });
  t.teardown(() => app.close());
  const local = await fetch(`${app.url}/metrics`);
  t.equal(local.status, 200, 'loopback');
  parsePrometheusText(await local.text());
  const remote = await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.7' });
  t.equal(remote.statusCode, 401, 'another address');
});

t.test('/metrics without METRICS_TOKEN behind a reverse proxy on the same host (TRUST_PROXY=loopback): the client behind it is not loopback', async (t) => {
  const app = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
  t.teardown(() => app.close());
  const viaProxy = await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(viaProxy.statusCode, 401, 'a client through the proxy is refused');
  const spoofed = await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' } });
  t.equal(spoofed.statusCode, 401, 'a client naming itself 127.0.0.1 is refused: the proxy appended its real address');
  const local = await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
  t.equal(local.statusCode, 200, 'a caller on this host, not through the proxy');
});

t.test('/metrics without METRICS_TOKEN and TRUST_PROXY=true: a remote client naming itself 127.0.0.1 is refused', async (t) => {
  const app = await startTestApp({ env: { TRUST_PROXY: 'true' } });
  t.teardown(() => app.close());
  const forged = await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' } });
  t.equal(forged.statusCode, 401, 'its socket is not loopback');
  t.equal((await app.fastify.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode, 200, 'a local caller');
});

t.test('the parser is strict', async (t) => {
  t.throws(() => parsePrometheusText('foo 1\n'), /before its # TYPE/);
  t.throws(() => parsePrometheusText('# TYPE foo counter\nfoo{a="1} 1\n'));
  t.throws(() => parsePrometheusText('# TYPE foo counter\nfoo one\n'), /bad sample value/);
  t.throws(() => parsePrometheusText('# TYPE foo counter\nfoo 1'), /newline/);
  t.equal(parsePrometheusText('# HELP foo x\n# TYPE foo counter\nfoo{a="q\\"x"} 3\n').get('foo')?.samples[0]?.labels.a, 'q"x');
});
