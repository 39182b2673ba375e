import { request } from 'node:http';
import t from 'tap';
import { messageReceived, startSubscribedApp, testCertificate } from '../webhooks/helpers.ts';
import { type Family, parsePrometheusText } from './promText.ts';
import { startWorkerProcess } from './workerProcess.ts';

/**
 * `outreach worker webhooks --metrics-port 0`: a worker process, which serves no API, still answers
 * GET /metrics with its own deliveries, queue and lags, behind the same METRICS_TOKEN rule.
 */
t.setTimeout(180_000);

const total = (f: Family | undefined, labels: Record<string, string>) =>
  f?.samples.filter((s) => s.name === f.name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0) ?? 0;

t.test('a webhook worker process serves /metrics with the deliveries it made', async (t) => {
  const { caFile } = await testCertificate();
  const token = 'worker-metrics-token-0123456789';
  const env = {
    LOG_LEVEL: 'silent',
    METRICS_TOKEN: token,
    WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
    WEBHOOK_EXTRA_CA_FILE: caFile,
    WEBHOOK_RETRY_BASE_MS: '30',
    WEBHOOK_TIMEOUT_MS: '2000',
  };
  const { app, tenant, receiver } = await startSubscribedApp(t, env, (_r, n) => (n === 1 ? 500 : 200), 'metrics');

  const { child, exited, url } = await startWorkerProcess('webhooks', { DATA_DIR: app.dataDir, ...env });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  await app.services.events.append('test-worker-metrics', [messageReceived(tenant, 1)], 'any');
  await receiver.waitFor((r) => r.length >= 2, 30_000);

  t.equal((await fetch(`${url}/metrics`)).status, 401, 'no bearer token: 401');
  t.equal((await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all-000' } })).status, 401, 'wrong token: 401');
  const twice = await new Promise<{ status: number; challenge: unknown }>((resolve, reject) =>
    request(`${url}/metrics`, { headers: ['host', new URL(url).host, 'authorization', `Bearer ${token}`, 'authorization', `Bearer ${token}`] }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, challenge: res.headers['www-authenticate'] });
    })
      .on('error', reject)
      .end(),
  );
  t.same(twice, { status: 400, challenge: 'Bearer error="invalid_request"' }, 'the token in two Authorization headers: 400, as on the API');
  const other = await fetch(`${url}/api/v1/sites`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(other.status, 404, 'a worker serves nothing else');
  t.equal(((await other.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');

  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusText(await res.text());
  const attempts = families.get('outreach_webhook_delivery_attempts_total');
  t.equal(total(attempts, { outcome: 'http_5xx' }), 1, 'the failed first attempt, made by the worker process');
  t.equal(total(attempts, { outcome: 'ok' }), 1, 'and the successful retry');
  t.equal(families.get('outreach_webhook_dispatch_lag')?.type, 'gauge', 'dispatcher lag reported');
  t.ok(families.get('outreach_webhook_retry_queue_depth'), 'retry queue depth reported');
  t.ok(families.get('outreach_projection_lag')?.samples.some((s) => s.labels.projection === 'webhookSubscriptions'), 'projection lag per projection');
  t.notOk(families.has('http_requests_total') && total(families.get('http_requests_total'), {}) > 0, 'no API requests counted: it serves none');

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM: the worker and its metrics listener stop, exit 0');
});
