import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest } from './helpers.ts';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: { id: string; type: string; siteId: string; teamId: string; timestamp: number; data: Record<string, unknown> };
}

t.test('ingestion events reach a real HTTPS receiver through the delivery engine', async (t) => {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  } as never);
  const received: Received[] = [];
  const receiver = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { receiver.closeAllConnections(); receiver.close(() => r()); }));
  const port = (receiver.address() as AddressInfo).port;

  const app = await startTestApp({ env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8' } });
  t.teardown(() => app.close());
  const worker = new WebhookDeliveryWorker(app.services, { ...workerOptionsFrom(app.config), extraCa: pems.cert });
  await worker.start();
  t.teardown(() => worker.stop());

  const tenant = await createTenant(app.services);
  const created = await app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
    headers: bearer(tenant.key),
    payload: { label: 'crm', url: `https://127.0.0.1:${port}/hook`, eventTypes: ['outreach.opportunity_created', 'outreach.message_received'] },
  });
  t.equal(created.statusCode, 201, 'subscription created');
  const secret = created.json().secret as string;

  const res = await ingest(app.fastify, tenant, PITCH);
  t.equal(res.statusCode, 201);
  const result = res.json();
  const deadline = Date.now() + 15_000;
  while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.equal(received.length, 2, 'two deliveries');
  const byType = Object.fromEntries(received.map((r) => [r.body.type, r]));
  const opp = byType['outreach.opportunity_created']!;
  const msg = byType['outreach.message_received']!;
  t.same(opp.body.data, { opportunityId: result.opportunityIds[0], conversationId: result.conversationIds[0], entrySource: 'forwarded_actionable' }, 'opportunity_created: exactly the spec fields');
  t.same(Object.keys(msg.body.data).sort(), ['conversationId', 'entrySource', 'messageId', 'opportunityId']);
  t.match(msg.body.data, { conversationId: result.conversationIds[0], opportunityId: result.opportunityIds[0], entrySource: 'forwarded_actionable' });
  for (const r of received) {
    t.match(r.body, { siteId: tenant.siteId, teamId: tenant.teamId });
    t.equal(r.headers['service-event'], r.body.type);
    const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(r.headers['service-signature']))!;
    t.equal(v1, createHmac('sha256', secret).update(`${ts}.${r.raw}`).digest('hex'), 'signed with the subscription secret');
  }
});
