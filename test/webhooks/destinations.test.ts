import t from 'tap';
import { BlockList } from 'node:net';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { webhookUrlProblem } from '../../src/domain/destination.ts';
import { deliveriesStream } from '../../src/domain/webhookDelivery.ts';
import type { WebhookDeliveryDoc } from '../../src/readModels/webhookDeliveries.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

const REFUSED_LITERALS: Array<[string, string]> = [
  ['loopback', 'https://127.0.0.1/hook'],
  ['loopback v6', 'https://[::1]/hook'],
  ['private 10/8', 'https://10.1.2.3/hook'],
  ['private 172.16/12', 'https://172.16.0.1/hook'],
  ['private 192.168/16', 'https://192.168.1.1/hook'],
  ['unique-local v6', 'https://[fd00::1]/hook'],
  ['link-local (metadata)', 'https://169.254.169.254/latest/meta-data'],
  ['link-local v6', 'https://[fe80::1]/hook'],
  ['shared address 100.64/10', 'https://100.64.0.1/hook'],
  ['multicast', 'https://224.0.0.1/hook'],
  ['unspecified', 'https://0.0.0.0/hook'],
  ['reserved 240/4', 'https://240.0.0.1/hook'],
  ['reserved documentation', 'https://192.0.2.10/hook'],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/hook'],
  ['6to4 of loopback', 'https://[2002:7f00:1::1]/hook'],
  ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook'],
];
/** Refused at creation by name; at delivery the name is judged by what it resolves to. */
const REFUSED_NAMES: Array<[string, string]> = [['localhost with a trailing dot', 'https://localhost./hook']];

t.test('creation refuses literal refused addresses and plain HTTP with 400 VALIDATION_ERROR', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  for (const [label, url] of [...REFUSED_LITERALS, ...REFUSED_NAMES, ['plain http', 'http://example.com/hook'] as [string, string]]) {
    const res = await app.fastify.inject({
      method: 'POST',
      url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
      headers: bearer(tenant.key),
      payload: { label: 'x', url, eventTypes: ['outreach.reply_sent'] },
    });
    t.equal(res.statusCode, 400, `${label}: 400`);
    t.equal(res.json().error?.code, 'VALIDATION_ERROR', `${label}: VALIDATION_ERROR`);
  }
  const list = await app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`, headers: bearer(tenant.key) });
  t.same(list.json().subscriptions, [], 'nothing stored');
});

t.test('delivery refuses every refused class at connect time, including a name that resolves to loopback', async (t) => {
  // No allowed ranges here: loopback is refused like everything else.
  const h = await startHarness({ env: { WEBHOOK_ALLOWED_RANGES: '', WEBHOOK_MAX_RETRIES: '0', WEBHOOK_TIMEOUT_MS: '3000' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 200);
  t.teardown(() => receiver.close());
  const targets: Array<[string, string]> = [
    ...REFUSED_LITERALS,
    ['listening loopback receiver', receiver.url],
    ['DNS name resolving to loopback', `https://localhost:${receiver.port}/hook`],
  ];
  const ids = new Map<string, string>();
  for (const [label, url] of targets) {
    // Created through the command, as a subscription stored before a policy change would be.
    const { subscriptionId } = await createSubscription(h.app.services, {
      teamId: h.tenant.teamId,
      siteId: h.tenant.siteId,
      label,
      url,
      eventTypes: ['outreach.message_received'],
      createdByOauthClientId: null,
    });
    ids.set(label, subscriptionId);
  }
  const p = await h.append(messageReceived(h.tenant, 1));
  await h.worker.waitForPosition(p, 5_000);
  const deadline = Date.now() + 10_000;
  const outcome = async (id: string) => (await h.app.services.events.readStream(deliveriesStream(id))).find((e) => e.type === 'DeliveryFailed');
  for (const [label, id] of ids) {
    while (!(await outcome(id)) && Date.now() < deadline) await sleep(20);
    const failed = await outcome(id);
    t.equal((failed?.data as { status?: string } | undefined)?.status, 'blocked_destination', `${label}: blocked_destination`);
  }
  t.equal(receiver.received.length, 0, 'the loopback receiver never got a request');
  await h.app.services.projections.waitFor(await h.app.services.events.headPosition(), 5_000);
  const doc = (await h.app.services.readModels.find<WebhookDeliveryDoc>('webhookDeliveries', { subscription_id: ids.get('DNS name resolving to loopback')! }))[0]!;
  t.match(doc.attempts[0]!.error, /loopback/, 'the recorded error names the refused class');
});

t.test('an allowed range and an extra CA make a loopback receiver reachable', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 200);
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 2));
  await receiver.waitFor((r) => r.length === 1);
  t.pass('delivered to 127.0.0.1 with WEBHOOK_ALLOWED_RANGES=127.0.0.0/8 and the test CA');
});

t.test('without the extra CA the self-signed receiver is a tls_error', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0', WEBHOOK_EXTRA_CA_FILE: '' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 200);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 3));
  const deadline = Date.now() + 10_000;
  let failed;
  while (!(failed = (await h.app.services.events.readStream(deliveriesStream(sub.id))).find((e) => e.type === 'DeliveryFailed')) && Date.now() < deadline) await sleep(20);
  t.equal((failed?.data as { status?: string } | undefined)?.status, 'tls_error');
  t.equal(receiver.received.length, 0);
});

t.test('localhost at creation: refused unless 127.0.0.1 is allowed (delivery refuses a name when any of its addresses is refused)', async (t) => {
  const allow = (net: string, prefix: number, type: 'ipv4' | 'ipv6') => {
    const list = new BlockList();
    list.addSubnet(net, prefix, type);
    return list;
  };
  t.match(webhookUrlProblem('https://localhost/hook'), /loopback/);
  t.equal(webhookUrlProblem('https://localhost/hook', allow('127.0.0.0', 8, 'ipv4')), null);
  t.match(webhookUrlProblem('https://localhost/hook', allow('::1', 128, 'ipv6')), /loopback/, '::1 alone: localhost is 127.0.0.1 too');
  t.match(webhookUrlProblem('https://localhost/hook', allow('10.0.0.0', 8, 'ipv4')), /loopback/);
});

t.test('a host name that no DNS name can be is refused at creation; the reason reads as written', async (t) => {
  for (const url of ['https://example..com/h', 'https://-example.com/h', 'https://example-.com/h', `https://${'a'.repeat(64)}.example.com/h`, `https://${'abcdefghi.'.repeat(26)}com/h`]) {
    t.match(webhookUrlProblem(url), /url must name a host/, url);
  }
  for (const url of ['https://example.com/h', 'https://hooks.example.com./h', 'https://xn--bcher-kva.example/h', 'https://bücher.example/h', 'https://a-b.c_d.example:8443/h', `https://${'a'.repeat(63)}.example.com/h`]) {
    t.equal(webhookUrlProblem(url), null, url);
  }
  t.equal(webhookUrlProblem('https://100.64.0.1/h'), 'url points to a shared address space address (100.64.0.0/10), which webhooks may not target');
  t.equal(webhookUrlProblem('https://169.254.169.254/h'), 'url points to a link-local address, which webhooks may not target');
});
