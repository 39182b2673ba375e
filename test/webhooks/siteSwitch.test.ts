import t from 'tap';
import { switchSiteWebhooks } from '../../src/commands/tenancy.ts';
import { siteDecider } from '../../src/domain/site.ts';
import { getSite } from '../../src/readModels/sites.ts';
import { given } from '../helpers/givenWhenThen.ts';
import { settle } from '../helpers/http.ts';
import { outreach } from '../helpers/cli.ts';
import { messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

const created = {
  type: 'SiteCreated' as const,
  data: {
    siteId: 'S1', teamId: 'T1', domain: 'a.test', forwardingToken: 'tok', createdAt: '2026-01-15T12:00:00.000Z', plan: 'pro' as const,
    licensed: true, sendingDomainVerified: false, aiCredits: 0, dailyIngestionCap: 500, dailyExtractionCap: 100,
  },
};
const switched = (enabled: boolean) => ({ type: 'SiteWebhooksSwitched' as const, data: { siteId: 'S1', enabled, switchedAt: '2026-01-15T12:05:00.000Z' } });
const command = (enabled: boolean) => ({ type: 'SwitchSiteWebhooks' as const, data: { siteId: 'S1', enabled, now: '2026-01-15T12:05:00.000Z' } });

t.test('SwitchSiteWebhooks: on by default; a switch to the current state records nothing', async () => {
  given(siteDecider, [created]).when(command(true)).then([]);
  given(siteDecider, [created]).when(command(false)).then([switched(false)]);
  given(siteDecider, [created, switched(false)]).when(command(false)).then([]);
  given(siteDecider, [created, switched(false)]).when(command(true)).then([switched(true)]);
});

t.test('off: nothing is delivered; on again: only events after the switch, never those from while it was off', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  const idOf = (n: number) => `msg_${n}`;

  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 1);

  await switchSiteWebhooks(h.app.services, { siteId: h.tenant.siteId, enabled: false });
  await settle(h.app.services);
  t.equal((await getSite(h.app.services.readModels, h.tenant.siteId))?.webhooksEnabled, false, 'the site shows webhooks off');
  for (let n = 2; n <= 6; n++) await h.append(messageReceived(h.tenant, n));
  const offHead = await h.app.services.events.headPosition();
  t.ok(await h.worker.waitForPosition(offHead, 15_000), 'the dispatcher has read past the events from while off');
  await sleep(300);
  t.equal(receiver.received.length, 1, 'nothing delivered while off');

  await switchSiteWebhooks(h.app.services, { siteId: h.tenant.siteId, enabled: true });
  for (let n = 7; n <= 9; n++) await h.append(messageReceived(h.tenant, n));
  await receiver.waitFor((r) => r.length >= 4, 15_000);
  t.ok(await h.worker.waitForPosition(await h.app.services.events.headPosition(), 15_000));
  await sleep(300);
  const delivered = receiver.received.map((r) => r.json.data.messageId as string).sort();
  t.same(delivered, [1, 7, 8, 9].map(idOf).sort(), 'the event before, then only those after switching on again');
});

t.test('the switch holds across a restart of the worker (its state is kept with its checkpoint)', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  await switchSiteWebhooks(h.app.services, { siteId: h.tenant.siteId, enabled: false });
  t.ok(await h.worker.waitForPosition(await h.app.services.events.headPosition(), 15_000));
  await h.worker.stop();
  await h.append(messageReceived(h.tenant, 1));
  await h.worker.start();
  t.ok(await h.worker.waitForPosition(await h.app.services.events.headPosition(), 15_000));
  await sleep(300);
  t.equal(receiver.received.length, 0, 'an event from while off, read after the restart, is not delivered');
});

t.test('the CLI: outreach site webhooks off|on', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const env = { DATA_DIR: h.app.dataDir };
  const off = await outreach(['--json', 'site', 'webhooks', 'off', '--site', h.tenant.siteId], env);
  t.equal(off.code, 0, off.stderr);
  t.same(off.json(), { siteId: h.tenant.siteId, webhooksEnabled: false });
  const bad = await outreach(['--json', 'site', 'webhooks', 'sometimes', '--site', h.tenant.siteId], env);
  t.equal(bad.code, 1);
  t.match(bad.stdout, /on, off/);
  const events = (await h.app.services.events.readStream(`site-${h.tenant.siteId}`)).map((e) => e.type);
  t.same(events, ['SiteCreated', 'SiteWebhooksSwitched']);
});
