/**
 * Signed webhook deliveries per second through the delivery engine, against a raw undici POST loop
 * of the same bodies to the same local HTTPS keep-alive receiver, in the same run; then the latency
 * from event append to receipt at a fixed moderate rate.
 *
 * - throughput: N MessageReceived events are appended while the worker is stopped; the worker then
 *   starts and the clock runs until the receiver has all N. Per delivery the engine does what it
 *   always does: a durable claim (DeliveryScheduled, compare-and-set), signing, the POST, and the
 *   durable record (DeliveryAttempted + DeliverySucceeded), with the read-model projections running
 *   in the same process. The raw loop POSTs the very same bodies with the same number of
 *   connections (the per-subscription concurrency) and no signing or recording.
 * - latency: events appended at RATE per second for LATENCY_SECONDS; for each, receipt time minus
 *   the moment its append was issued. Source appends, the dispatcher's page read, the claim, the
 *   POST and the receiver are all in this one process. Measured alone, then again while real
 *   ingestions (`POST .../inbox/messages` through the service's HTTP app in this same process, as
 *   `npm start` runs it, on another site that has its own subscription) run at INGEST_RATE per second.
 * - latency as `npm start` runs it: the same two measurements (alone, with ingestions) on a second
 *   data directory, wired as src/server.ts wires it: the projections in their thread
 *   (`startProjections`), the webhook delivery worker and the Outreach Agent in theirs
 *   (`startBackgroundRoles`), the fastify app taking the ingestions on the main thread. The measured
 *   events are appended through the main thread's event store, whose append wakes both threads as an
 *   ingestion's append does. The figures above keep their in-process wiring (one event loop) so they
 *   stay comparable with earlier runs.
 * - growth: the delivery rate with 100 subscriptions on one site (N/100 events each) against the one
 *   subscription of the throughput figure.
 * - connection reuse: TLS handshakes the receiver saw during the engine's throughput phase.
 *
 * The worker runs with the service's defaults; WEBHOOK_RECORD_BATCH_MS in the environment measures
 * another record pause.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, rootCertificates } from 'node:tls';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import Fastify from 'fastify';
import { app } from '../src/app.ts';
import { changeSiteSettings, createApiKey, createSite, createTeam } from '../src/commands/tenancy.ts';
import { createSubscription } from '../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../src/config.ts';
import { buildEnvelope } from '../src/domain/webhookDelivery.ts';
import type { OutreachEvent } from '../src/domain/outreachEvents.ts';
import { type Services, createServices } from '../src/services.ts';
import { startProjections } from '../src/projections/startProjections.ts';
import { startBackgroundRoles } from '../src/processors/startBackgroundRoles.ts';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../src/processors/webhookDelivery/worker.ts';
import { webhookWorkerDeps } from '../src/processors/webhookDelivery/startWorker.ts';
import { profileWindow } from './profileWindow.ts';
import type { BenchResult } from './types.ts';

const N = Number(process.env.BENCH_WEBHOOK_N ?? 2_000);
const CONNECTIONS = 16;
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 500);
const LATENCY_SECONDS = Number(process.env.BENCH_WEBHOOK_LATENCY_SECONDS ?? 4);
const INGEST_RATE = Number(process.env.BENCH_WEBHOOK_INGEST_RATE ?? 100);
const FAN_OUT = Number(process.env.BENCH_WEBHOOK_FAN_OUT ?? 100);

const PITCH = {
  from: 'jane@prospect.io',
  fromName: 'Jane Prospect',
  subject: 'Quick link suggestion for your SEO article',
  bodyText:
    'Hi there,\nI loved your article https://example.test/blog/seo-tips.\nWould you consider adding a link to our guide https://prospect.io/schema-guide with the anchor text "schema markup guide"?\nThanks, Jane',
};

const cpuMicros = (u: NodeJS.CpuUsage) => u.user + u.system;

export default async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(process.env.BENCH_WEBHOOK_DIR ?? tmpdir(), 'bench-webhooks-'));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'basicConstraints', cA: true }, { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pems.cert);

  // The receiver: answers 204 at once; notes when each envelope id, and each bench message id, arrived.
  const arrivals = new Map<string, number>();
  const messageArrivals = new Map<string, number>();
  let received = 0;
  let handshakes = 0;
  let onReceive: (() => void) | null = null;
  const server = createServer({ cert: pems.cert, key: pems.private, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = Buffer.concat(chunks).toString();
      const id = body.slice(7, body.indexOf('"', 7));
      if (!arrivals.has(id)) arrivals.set(id, now);
      const m = body.indexOf('"messageId":"msg_');
      if (m >= 0) {
        const messageId = body.slice(m + 13, body.indexOf('"', m + 13));
        if (!messageArrivals.has(messageId)) messageArrivals.set(messageId, now);
      }
      received++;
      res.writeHead(204).end();
      onReceive?.();
    });
  });
  server.on('secureConnection', () => handshakes++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const waitReceived = (count: number, timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      if (received >= count) return resolve(true);
      const timer = setTimeout(() => {
        onReceive = null;
        resolve(false);
      }, timeoutMs);
      onReceive = () => {
        if (received >= count) {
          clearTimeout(timer);
          onReceive = null;
          resolve(true);
        }
      };
    });

  const configIn = (dataDir: string) => loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
    WEBHOOK_EXTRA_CA_FILE: caFile,
    WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(CONNECTIONS),
    WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE: String(Math.max(25, FAN_OUT)),
    WRITE_RATE_LIMIT_PER_MINUTE: '1000000000',
    WEBHOOK_RECORD_BATCH_MS: process.env.WEBHOOK_RECORD_BATCH_MS,
  });
  const config = configIn(dir);
  const services = await createServices(config);
  services.projections.start();
  // The team, the site the measured events belong to (one subscription), and the site that takes
  // real ingestions (its own subscription, an `inbox:write` key): made in each data directory.
  const seedSites = async (into: Services) => {
    const team = await createTeam(into, { name: 'Bench', ownerEmail: 'bench@example.test' });
    const site = await createSite(into, { teamId: team.teamId, domain: 'bench.example', plan: 'advanced' }, config.MAIL_DOMAIN);
    await createApiKey(into, { teamId: team.teamId, name: 'b', scopes: ['webhooks:write'], siteId: null });
    await createSubscription(into, { teamId: team.teamId, siteId: site.siteId, label: 'bench', url, eventTypes: ['outreach.message_received'], createdByOauthClientId: null });
    const inboxSite = await createSite(into, { teamId: team.teamId, domain: 'inbox.example', plan: 'advanced' }, config.MAIL_DOMAIN);
    await changeSiteSettings(into, { siteId: inboxSite.siteId, changes: { dailyIngestionCap: 1_000_000_000, dailyExtractionCap: 1_000_000_000, sendingDomainVerified: true } });
    await createSubscription(into, { teamId: team.teamId, siteId: inboxSite.siteId, label: 'inbox', url, eventTypes: ['outreach.message_received'], createdByOauthClientId: null });
    const inboxKey = await createApiKey(into, { teamId: team.teamId, name: 'ingest', scopes: ['inbox:write'], siteId: null });
    return { team, site, inboxSite, inboxKey };
  };
  const { team, site, inboxSite, inboxKey } = await seedSites(services);

  let seq = 0;
  const event = (siteId = site.siteId, teamId = team.teamId): OutreachEvent => {
    const n = seq++;
    return {
      type: 'MessageReceived',
      data: { siteId, teamId, occurredAt: 1_768_478_400_000 + n, conversationId: `conv_${n}`, opportunityId: `opp_${n}`, messageId: `msg_${n}`, entrySource: 'direct_inbound_external' },
    };
  };
  // A site with FAN_OUT subscriptions (growth).
  const wideSite = await createSite(services, { teamId: team.teamId, domain: 'wide.example', plan: 'advanced' }, config.MAIL_DOMAIN);
  for (let i = 0; i < FAN_OUT; i++)
    await createSubscription(services, { teamId: team.teamId, siteId: wideSite.siteId, label: `wide ${i}`, url: `${url}?s=${i}`, eventTypes: ['outreach.message_received'], createdByOauthClientId: null });

  // ── raw baseline: the same bodies, POSTed with undici over the same number of keep-alive connections
  const bodies: Buffer[] = [];
  for (let i = 0; i < N; i++) bodies.push(Buffer.from(buildEnvelope(event(), `raw-${i}`).body));
  // One TLS context, as the engine's sender uses, so neither side pays for parsing the CA bundle per connection.
  const rawContext = createSecureContext({ ca: [...rootCertificates, pems.cert] });
  const rawRound = async () => {
    const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 30_000, connect: { secureContext: rawContext } });
    const started = performance.now();
    const cpu = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < N) {
          const body = bodies[next++]!;
          const res = await request(url, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
          await res.body.dump();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuUs = cpuMicros(process.cpuUsage(cpu));
    await agent.close();
    return { rate: N / seconds, cpuUs };
  };
  // The machine's speed drifts (shared CPUs): the baseline runs before and after the engine, and the ratio uses their mean.
  // A first round warms up the JIT, undici and the receiver for everyone; it is not counted.
  await rawRound();
  const rawBefore = await rawRound();

  // ── engine throughput: N events waiting in the log, then the worker runs, with the ports `npm start`
  // gives it (appends committed on the writer thread). BENCH_DELIVERY_APPENDS=calling-thread measures the
  // earlier wiring (a lone append commits on the event loop), for a comparison at the same load.
  const workerDeps = process.env.BENCH_DELIVERY_APPENDS === 'calling-thread' ? services : webhookWorkerDeps(services);
  received = 0;
  arrivals.clear();
  for (let i = 0; i < N; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_, j) => services.events.append(`bench-${i + j}`, [event()].map((e) => ({ type: e.type, data: e.data })), 'any')));
  }
  await services.projections.waitFor(await services.events.headPosition(), 30_000);
  const worker = new WebhookDeliveryWorker(workerDeps, workerOptionsFrom(config));
  const stopProfile = await profileWindow('webhookDelivery-engine');
  handshakes = 0;
  const engineStart = performance.now();
  const engineCpu = process.cpuUsage();
  await worker.start();
  const complete = await waitReceived(N, 120_000);
  const engineSeconds = (performance.now() - engineStart) / 1000;
  const engineCpuUs = cpuMicros(process.cpuUsage(engineCpu));
  await stopProfile();
  const engineHandshakes = handshakes;
  const engineUnique = arrivals.size;
  const engineRate = received / engineSeconds;
  // Let the records and projections settle (the worker stays running, idle) before the second baseline.
  await new Promise((r) => setTimeout(r, 200));
  await services.projections.waitFor(await services.events.headPosition(), 30_000);
  const rawAfter = await rawRound();
  const rawRate = (rawBefore.rate + rawAfter.rate) / 2;
  const rawCpuUs = (rawBefore.cpuUs + rawAfter.cpuUs) / 2;

  // ── growth: the same kind of events on a site with FAN_OUT subscriptions (one delivery per event and subscription)
  await worker.stop();
  const perSub = Math.max(1, Math.round(N / FAN_OUT));
  for (let i = 0; i < perSub; i++) {
    const e = event(wideSite.siteId);
    await services.events.append(`wide-${i}`, [{ type: e.type, data: e.data }], 'any');
  }
  await services.projections.waitFor(await services.events.headPosition(), 30_000);
  received = 0;
  const wideWorker = new WebhookDeliveryWorker(workerDeps, workerOptionsFrom(config));
  const wideStart = performance.now();
  await wideWorker.start();
  const wideComplete = await waitReceived(perSub * FAN_OUT, 120_000);
  const wideRate = received / ((performance.now() - wideStart) / 1000);
  await new Promise((r) => setTimeout(r, 200));
  await services.projections.waitFor(await services.events.headPosition(), 30_000);

  // ── latency at a fixed rate (the target's 500/s), alone and with ingestions running; then at a light 50/s
  // A latency setup: the services whose event store the measured events are appended to, the site
  // they belong to, and the ingestion route (the service's fastify app) of the site that takes ingestions.
  interface LatencySetup {
    services: Services;
    siteId: string;
    teamId: string;
    apiUrl: string;
    ingestKey: string;
  }
  const listenApp = async (on: Services, ids: Awaited<ReturnType<typeof seedSites>>) => {
    const fastify = Fastify({ logger: false });
    await fastify.register(app, { services: on });
    const apiUrl = `${await fastify.listen({ port: 0, host: '127.0.0.1' })}/api/v1/sites/${ids.inboxSite.siteId}/outreach/inbox/messages`;
    const setup: LatencySetup = { services: on, siteId: ids.site.siteId, teamId: ids.team.teamId, apiUrl, ingestKey: ids.inboxKey.key };
    return { fastify, setup };
  };
  const { fastify, setup: inProcess } = await listenApp(services, { team, site, inboxSite, inboxKey });
  const apiAgent = new Agent({ connections: 16 });
  const ingestionLoop = ({ apiUrl, ingestKey }: LatencySetup, rate: number, signal: AbortSignal) => {
    const latencies: number[] = [];
    let errors = 0;
    const inFlight: Promise<void>[] = [];
    const done = (async () => {
      const started = performance.now();
      for (let i = 0; !signal.aborted; i++) {
        const wait = started + (i * 1000) / rate - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        if (signal.aborted) break;
        const sent = performance.now();
        inFlight.push(
          request(apiUrl, {
            dispatcher: apiAgent,
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestKey}` },
            body: JSON.stringify({ ...PITCH, runExtraction: false }),
          }).then(
            async (res) => {
              await res.body.dump();
              if (res.statusCode === 201) latencies.push(performance.now() - sent);
              else errors++;
            },
            () => void errors++,
          ),
        );
      }
      await Promise.all(inFlight);
      return { latencies: latencies.sort((a, b) => a - b), errors, sent: inFlight.length };
    })();
    return done;
  };
  const pctOf = (sorted: number[], p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN) * 10) / 10;
  const measureLatency = async (setup: LatencySetup, rate: number, seconds: number, ingestRate = 0) => {
    await new Promise((r) => setTimeout(r, 300));
    const issuedAt = new Map<string, number>();
    const total = Math.round(rate * seconds);
    const interval = 1000 / rate;
    const stopIngestion = new AbortController();
    const ingestion = ingestRate > 0 ? ingestionLoop(setup, ingestRate, stopIngestion.signal) : null;
    if (ingestion) await new Promise((r) => setTimeout(r, 500)); // ingestions under way before the first measured event
    // For the stages: when each append resolved, and its position (the claim names it as its source).
    const committedAt = new Map<string, number>();
    const messageAt = new Map<string, string>();
    const fromPosition = await setup.services.events.headPosition();
    const epochOffset = Date.now() - performance.now();
    const started = performance.now();
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const e = event(setup.siteId, setup.teamId);
      const messageId = `msg_${seq - 1}`;
      issuedAt.set(messageId, performance.now());
      appends.push(
        setup.services.events.append(`lat-${seq}`, [{ type: e.type, data: e.data }], 'any').then((r) => {
          committedAt.set(messageId, performance.now());
          messageAt.set(String(r.position), messageId);
        }),
      );
    }
    await Promise.all(appends);
    const issueRate = total / ((performance.now() - started) / 1000);
    const deadline = Date.now() + 60_000;
    while ([...issuedAt.keys()].some((k) => !messageArrivals.has(k)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stopIngestion.abort();
    const ingested = ingestion ? await ingestion : null;
    const latencies: number[] = [];
    for (const [messageId, issued] of issuedAt) {
      const arrived = messageArrivals.get(messageId);
      if (arrived !== undefined) latencies.push(arrived - issued);
    }
    latencies.sort((a, b) => a - b);
    // Stages, from the log after the fact: the claim's `scheduledAt` is the dispatcher's clock when it
    // read the page holding the event (epoch ms, whole milliseconds).
    const claimedAt = new Map<string, number>();
    for (let after = fromPosition; ; ) {
      const page = await setup.services.events.readAll({ after, limit: 1_000 });
      if (page.length === 0) break;
      after = page[page.length - 1]!.position;
      for (const recorded of page) {
        if (recorded.type !== 'DeliveryScheduled') continue;
        const data = recorded.data as { sourcePosition: string; scheduledAt: string };
        const messageId = messageAt.get(data.sourcePosition);
        if (messageId !== undefined && !claimedAt.has(messageId)) claimedAt.set(messageId, Date.parse(data.scheduledAt) - epochOffset);
      }
    }
    const stage = (from: Map<string, number>, to: Map<string, number>) => {
      const spans: number[] = [];
      for (const [messageId, t0] of from) {
        const t1 = to.get(messageId);
        if (t1 !== undefined) spans.push(t1 - t0);
      }
      spans.sort((a, b) => a - b);
      return `p50 ${pctOf(spans, 50)}, p99 ${pctOf(spans, 99)}`;
    };
    const stages = {
      appended: stage(issuedAt, committedAt),
      claimed: stage(committedAt, claimedAt),
      received: stage(claimedAt, messageArrivals),
    };
    return {
      stages,
      total,
      all: latencies.length === total,
      issueRate: Math.round(issueRate),
      p50: pctOf(latencies, 50),
      p99: pctOf(latencies, 99),
      ingestions: ingested ? ingested.latencies.length : 0,
      ingestionErrors: ingested ? ingested.errors : 0,
      ingestionP50: ingested ? pctOf(ingested.latencies, 50) : NaN,
      ingestionP99: ingested ? pctOf(ingested.latencies, 99) : NaN,
    };
  };
  const alone = await measureLatency(inProcess, RATE, LATENCY_SECONDS);
  const target = await measureLatency(inProcess, RATE, LATENCY_SECONDS, INGEST_RATE);
  const light = await measureLatency(inProcess, 50, 3);
  await fastify.close();
  await wideWorker.stop();
  await services.close();

  // ── latency as `npm start` runs it (src/server.ts): a fresh data directory, the same config, the
  // projections and the background roles (webhook delivery worker + Outreach Agent) in their threads.
  let roleErrors = 0;
  const roleLog = {
    error: (obj: unknown, msg?: string) => {
      const err = (obj as { err?: unknown } | null)?.err;
      if (roleErrors++ === 0) process.stdout.write(`  npm start wiring, first role error: ${msg} ${err instanceof Error ? err.stack : String(err ?? '')}\n`);
    },
    warn: () => {},
  };
  const projectionError = (err: unknown) => roleLog.error({ err }, 'projection failed');
  const threadedDir = join(dir, 'npm-start');
  mkdirSync(threadedDir);
  const threadedServices = await createServices(configIn(threadedDir), { onProjectionError: projectionError });
  const projections = startProjections(threadedServices, projectionError);
  const threadedIds = await seedSites(threadedServices);
  const { fastify: threadedApp, setup: threaded } = await listenApp(threadedServices, threadedIds);
  const background = await startBackgroundRoles(threadedServices, projections, { log: roleLog });
  // The threads start cold (the main thread's code is warm from the phases above): one uncounted second.
  await measureLatency(threaded, RATE, 1, INGEST_RATE);
  const stopThreadedProfile = await profileWindow('webhookDelivery-npm-start-main-thread');
  const threadedAlone = await measureLatency(threaded, RATE, LATENCY_SECONDS);
  const threadedTarget = await measureLatency(threaded, RATE, LATENCY_SECONDS, INGEST_RATE);
  await stopThreadedProfile();
  // Throughput as `npm start` runs it: N events appended at once (in the same batches as above) while
  // the worker runs in its thread; timed from the first append to the last receipt, appends included.
  received = 0;
  arrivals.clear();
  const threadedStart = performance.now();
  const threadedCpu = process.cpuUsage();
  for (let i = 0; i < N; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_, j) => {
      const e = event(threadedIds.site.siteId, threadedIds.team.teamId);
      return threadedServices.events.append(`threaded-${i + j}`, [{ type: e.type, data: e.data }], 'any');
    }));
  }
  const threadedComplete = await waitReceived(N, 120_000);
  const threadedRate = received / ((performance.now() - threadedStart) / 1000);
  const threadedCpuUs = cpuMicros(process.cpuUsage(threadedCpu));
  const threadedUnique = arrivals.size;
  await threadedApp.close();
  for (const role of background.roles) await role.stop(5_000);
  await projections.stop();
  await threadedServices.close();
  await apiAgent.close();
  await new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  rmSync(dir, { recursive: true, force: true });

  const ratio = engineRate / rawRate;
  return {
    name: 'webhook delivery',
    figures: {
      deliveries: N,
      connections: CONNECTIONS,
      'raw undici POST/s (mean)': Math.round(rawRate),
      'raw undici POST/s before': Math.round(rawBefore.rate),
      'raw undici POST/s after': Math.round(rawAfter.rate),
      'engine signed deliveries/s': Math.round(engineRate),
      'engine delivered all': complete && engineUnique === N ? 'yes' : `no (${engineUnique} ids of ${N})`,
      'raw CPU µs per request': Math.round(rawCpuUs / N),
      'engine CPU µs per delivery': Math.round(engineCpuUs / N),
      'load average (1 min) at end': Math.round(loadavg()[0]! * 10) / 10,
      cpus: cpus().length,
      'engine TLS handshakes (connections opened)': engineHandshakes,
      [`${FAN_OUT} subscriptions on one site: deliveries`]: perSub * FAN_OUT,
      [`${FAN_OUT} subscriptions on one site: deliveries/s`]: Math.round(wideRate),
      [`${FAN_OUT} subscriptions on one site: ÷ 1 subscription`]: Number((wideRate / engineRate).toFixed(2)),
      [`${FAN_OUT} subscriptions on one site: delivered all`]: wideComplete ? 'yes' : 'no',
      'latency wiring (alone / with ingestions / light load)': 'in-process: projections and delivery worker on the main event loop (as before)',
      'latency rate (events/s)': RATE,
      'latency events': target.total,
      'alone: issue loop rate achieved (events/s)': alone.issueRate,
      'alone: append→receipt p50 ms': alone.p50,
      'alone: append→receipt p99 ms': alone.p99,
      'alone: delivered all': alone.all ? 'yes' : 'no',
      'with ingestions: ingestion rate (req/s)': INGEST_RATE,
      'with ingestions: issue loop rate achieved (events/s)': target.issueRate,
      'with ingestions: append→receipt p50 ms': target.p50,
      'with ingestions: append→receipt p99 ms': target.p99,
      'with ingestions: delivered all': target.all ? 'yes' : 'no',
      'with ingestions: ingestions answered 201': target.ingestions,
      'with ingestions: ingestion errors': target.ingestionErrors,
      'with ingestions: ingestion p50 ms': target.ingestionP50,
      'with ingestions: ingestion p99 ms': target.ingestionP99,
      'light load: rate (events/s)': 50,
      'light load: p50 ms': light.p50,
      'light load: p99 ms': light.p99,
      'light load: delivered all': light.all ? 'yes' : 'no',
      'npm start wiring: projections / workers': `${projections.mode} / ${background.mode}`,
      'npm start wiring, alone: issue loop rate achieved (events/s)': threadedAlone.issueRate,
      'npm start wiring, alone: append→receipt p50 ms': threadedAlone.p50,
      'npm start wiring, alone: append→receipt p99 ms': threadedAlone.p99,
      'npm start wiring, alone: delivered all': threadedAlone.all ? 'yes' : 'no',
      'npm start wiring, with ingestions: issue loop rate achieved (events/s)': threadedTarget.issueRate,
      'npm start wiring, with ingestions: append→receipt p50 ms': threadedTarget.p50,
      'npm start wiring, with ingestions: append→receipt p99 ms': threadedTarget.p99,
      'npm start wiring, with ingestions: delivered all': threadedTarget.all ? 'yes' : 'no',
      'npm start wiring, with ingestions: ingestions answered 201': threadedTarget.ingestions,
      'npm start wiring, with ingestions: ingestion errors': threadedTarget.ingestionErrors,
      'npm start wiring, with ingestions: ingestion p50 ms': threadedTarget.ingestionP50,
      'npm start wiring, with ingestions: ingestion p99 ms': threadedTarget.ingestionP99,
      'npm start wiring, throughput: signed deliveries/s (appends included)': Math.round(threadedRate),
      'npm start wiring, throughput: ÷ raw undici POST/s': `${((100 * threadedRate) / rawRate).toFixed(1)}%`,
      'npm start wiring, throughput: CPU µs per delivery (every thread)': Math.round(threadedCpuUs / N),
      'npm start wiring, throughput: delivered all': threadedComplete && threadedUnique === N ? 'yes' : `no (${threadedUnique} ids of ${N})`,
      'npm start wiring: role errors logged': roleErrors,
      'npm start wiring, stages ms (alone): issue → append resolved': threadedAlone.stages.appended,
      'npm start wiring, stages ms (alone): append resolved → dispatcher read it': threadedAlone.stages.claimed,
      'npm start wiring, stages ms (alone): dispatcher read it → receipt': threadedAlone.stages.received,
      'npm start wiring, stages ms (with ingestions): issue → append resolved': threadedTarget.stages.appended,
      'npm start wiring, stages ms (with ingestions): append resolved → dispatcher read it': threadedTarget.stages.claimed,
      'npm start wiring, stages ms (with ingestions): dispatcher read it → receipt': threadedTarget.stages.received,
    },
    ratio,
    ratioLabel: 'engine signed deliveries/s ÷ raw undici POST/s',
    target: '≥ 70% of raw; p99 append→receipt ≤ 20 ms at 500 events/s with ingestions running (in-process and npm start wiring)',
    pass: ratio >= 0.7 && target.p99 <= 20 && threadedTarget.p99 <= 20 && complete && target.all && threadedTarget.all,
  };
}
