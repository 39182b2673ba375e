import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { Test } from 'tap';
import { WebhookDeliveryWorker, type WorkerOptions, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import type { OutreachEvent } from '../../src/domain/outreachEvents.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { bearer, createTenant, startTestApp, type Tenant, type TestApp } from '../helpers/testApp.ts';

export interface Received {
  rawBody: Buffer;
  headers: IncomingHttpHeaders;
  receivedAt: number;
  /** Parsed envelope. */
  json: Record<string, any>;
}

/** What the receiver does with a request: answer a status, or never answer. */
export type Behaviour = (req: Received, count: number) => number | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  behaviour: Behaviour;
  /** Resolves once `predicate` holds on the received list (polls), or rejects after `timeoutMs`. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

let certPromise: Promise<{ cert: string; key: string; caFile: string }> | null = null;

/** One self-signed certificate for 127.0.0.1 / ::1 / localhost per test process, and a PEM file to trust it. */
export function testCertificate() {
  certPromise ??= (async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
      ],
    });
    const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, pems.cert);
    return { cert: pems.cert, key: pems.private, caFile };
  })();
  return certPromise;
}

/** A real HTTPS receiver on loopback that records every request's raw bytes. */
export async function startReceiver(behaviour: Behaviour = () => 200, host = '127.0.0.1'): Promise<Receiver> {
  const { cert, key } = await testCertificate();
  const received: Received[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    behaviour,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (received ${received.length})`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer({ cert, key, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {}
      const r: Received = { rawBody, headers: req.headers, receivedAt: Date.now(), json };
      received.push(r);
      const answer = receiver.behaviour(r, received.length);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer, answer >= 300 && answer < 400 ? { location: 'https://example.com/elsewhere' } : {});
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://${host.includes(':') ? `[${host}]` : host}:${receiver.port}/hook`;
  return receiver;
}

/**
 * The test's own signature check, written from the spec and independent of the service's signer:
 * `t=<seconds>,v1=<hex HMAC-SHA256("<t>.<raw body>")>`.
 */
export function independentlyVerify(r: Received, secret: string): boolean {
  const header = String(r.headers['service-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from(`${m[1]}.`, 'utf8'), r.rawBody])).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}

/** The `v1` signatures of a Service-Signature header with its `t`, parsed from the spec's format (several `v1` during a rotation). */
export function signaturesOf(r: Received): { t: string; v1: string[] } | null {
  const header = String(r.headers['service-signature'] ?? '');
  const m = /^t=(\d+)((?:,v1=[0-9a-f]{64})+)$/.exec(header);
  if (!m) return null;
  return { t: m[1]!, v1: m[2]!.slice(1).split(',').map((p) => p.slice(3)) };
}

/** Whether one of the header's `v1` entries is the HMAC of `<t>.<raw body>` with `secret`. */
export function signedWith(r: Received, secret: string): boolean {
  const sig = signaturesOf(r);
  if (!sig) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from(`${sig.t}.`, 'utf8'), r.rawBody])).digest();
  return sig.v1.some((v) => timingSafeEqual(expected, Buffer.from(v, 'hex')));
}

export interface Harness {
  app: TestApp;
  tenant: Tenant;
  worker: WebhookDeliveryWorker;
  close(): Promise<void>;
  subscribe(url: string, eventTypes: string[]): Promise<{ id: string; secret: string }>;
  append(event: OutreachEvent): Promise<bigint>;
}

/** The service (SQLite, projections) plus a webhook worker trusting the test CA and allowing loopback. */
export async function startHarness(options: { worker?: Partial<WorkerOptions>; env?: Record<string, string>; clock?: Clock } = {}): Promise<Harness> {
  const { caFile } = await testCertificate();
  const app = await startTestApp({
    clock: options.clock,
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_EXTRA_CA_FILE: caFile, WEBHOOK_RETRY_BASE_MS: '30', WEBHOOK_RETRY_FACTOR: '2', WEBHOOK_TIMEOUT_MS: '2000', ...options.env },
  });
  const tenant = await createTenant(app.services);
  const worker = new WebhookDeliveryWorker(app.services, { ...workerOptionsFrom(app.config), ...options.worker });
  await worker.start();
  return {
    app,
    tenant,
    worker,
    async close() {
      await worker.stop();
      await app.close();
    },
    async subscribe(url, eventTypes) {
      const res = await app.fastify.inject({
        method: 'POST',
        url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
        headers: bearer(tenant.key),
        payload: { label: 'test', url, eventTypes },
      });
      if (res.statusCode !== 201) throw new Error(`subscribe failed: ${res.statusCode} ${res.body}`);
      return { id: res.json().subscription.id, secret: res.json().secret };
    },
    async append(event) {
      const r = await app.services.events.append(`test-${app.services.newId()}`, [{ type: event.type, data: event.data }], 'any');
      return r.position;
    },
  };
}

/**
 * The service with no webhook worker of its own (the test starts the workers it needs, in this
 * process or as `outreach worker webhooks`), a tenant, and one `outreach.message_received`
 * subscription to a local HTTPS receiver answering as `behaviour` says.
 */
export async function startSubscribedApp(t: Test, env: Record<string, string>, behaviour: Behaviour, label: string) {
  const app = await startTestApp({ env });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const receiver = await startReceiver(behaviour);
  t.teardown(() => receiver.close());
  const created = await app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
    headers: bearer(tenant.key),
    payload: { label, url: receiver.url, eventTypes: ['outreach.message_received'] },
  });
  t.equal(created.statusCode, 201);
  return { app, tenant, receiver };
}

let seq = 0;
/** One example of each domain fact, with the spec's observed values. */
export function sampleEvents(tenant: { siteId: string; teamId: string }, occurredAt = 1_768_478_400_000 + ++seq): OutreachEvent[] {
  const base = { siteId: tenant.siteId, teamId: tenant.teamId, occurredAt };
  return [
    { type: 'OpportunityCreated', data: { ...base, opportunityId: 'opp_1', conversationId: 'conv_1', entrySource: 'forwarded_actionable' } },
    { type: 'MessageReceived', data: { ...base, conversationId: 'conv_1', opportunityId: 'opp_1', messageId: 'msg_1', entrySource: 'forwarded_actionable' } },
    {
      type: 'ReplySent',
      data: { ...base, conversationId: 'conv_1', messageId: 'msg_2', mailProviderMessageId: '<abc@mail.example>', triage: 'accept', autoResolved: true, sendOutcome: 'sent' },
    },
    {
      type: 'ConversationStatusChanged',
      data: { ...base, conversationId: 'conv_1', oldStatus: 'open', newStatus: 'resolved', resolvedBy: 'agent', resolutionOutcome: 'accept' },
    },
    { type: 'ContactSuppressed', data: { ...base, email: 'pitch@prospect.example', reason: 'opted_out', source: 'inbound_classifier', upgraded: false } },
  ];
}

export const messageReceived = (tenant: { siteId: string; teamId: string }, n: number): OutreachEvent => ({
  type: 'MessageReceived',
  data: { siteId: tenant.siteId, teamId: tenant.teamId, occurredAt: 1_768_478_400_000 + n, conversationId: `conv_${n}`, opportunityId: `opp_${n}`, messageId: `msg_${n}`, entrySource: 'direct_inbound_external' },
});

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A slow but healthy HTTPS receiver on 127.0.0.1 (the test CA): each POST's envelope id, and the most answered at once; 204 after `delayMs`. */
export async function startSlowReceiver(t: Test, delayMs: number): Promise<{ url: string; got: string[]; maxInFlight: () => number }> {
  const { cert, key } = await testCertificate();
  const got: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(204).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, maxInFlight: () => maxInFlight };
}

/**
 * A harness whose worker copy (`opts.workerId`) claimed `events` deliveries to a receiver answering
 * after 300 ms, sent about one and stopped: the rest stay pending under its name, for another copy
 * to take over. `copy(id)` makes a further worker with the same options under another name.
 */
export async function stoppedCopyWithPending(t: Test, opts: Partial<WorkerOptions> & { workerId: string }, events: number, firstEvent: number) {
  const h = await startHarness({ worker: opts });
  t.teardown(() => h.close());
  const receiver = await startSlowReceiver(t, 300);
  await h.subscribe(receiver.url, ['outreach.message_received']);
  let last = 0n;
  for (let i = 0; i < events; i++) last = await h.append(messageReceived(h.tenant, firstEvent + i));
  t.ok(await h.worker.waitForPosition(last, 5_000));
  await sleep(100);
  await h.worker.stop();
  const copy = (id: string) => new WebhookDeliveryWorker(h.app.services, { ...workerOptionsFrom(h.app.config), ...opts, workerId: id });
  return { h, ...receiver, copy };
}
