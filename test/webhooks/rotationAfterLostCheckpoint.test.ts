/**
 * Two delivery worker copies (docs/webhooks.md "Scale-out"). A copy that loses the dispatcher
 * checkpoint's compare-and-set reloads its subscriptions (Dispatcher.loadState -> Targets.clear);
 * it kept its opened signing secrets, so when the log it skipped held a SubscriptionSecretRotated it
 * went on signing with the rotated-out secret, after a graceSeconds: 0 rotation too.
 */
import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { bearer } from '../helpers/testApp.ts';
import { messageReceived, signaturesOf, signedWith, sleep, startHarness, startReceiver } from './helpers.ts';

t.test('after a rotation with graceSeconds 0, a copy that lost the checkpoint race signs with the new secret only', async (t) => {
  const h = await startHarness({ worker: { workerId: 'harness' } });
  t.teardown(() => h.close());
  await h.worker.stop(); // only the two copies below run
  const services = h.app.services;
  const receiver = await startReceiver(() => 204);
  t.teardown(() => receiver.close());

  // copy-1: an ordinary worker whose checkpoint write past `gateAfter` we can hold back for a moment (as a slow store would).
  let gate: Promise<void> | null = null;
  let gateAfter = -1n;
  let release = () => {};
  const readModels = new Proxy(services.readModels, {
    get(target, prop) {
      if (prop === 'applyBatch')
        return async (...args: Parameters<typeof target.applyBatch>) => {
          if (args[0] === 'webhookDispatcher' && gate && args[3] > gateAfter) await gate;
          return target.applyBatch(...args);
        };
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const opts = { ...workerOptionsFrom(h.app.config) };
  const copy1 = new WebhookDeliveryWorker({ ...services, readModels }, { ...opts, workerId: 'copy-1' });
  await copy1.start();
  t.teardown(() => copy1.stop());

  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 1);
  t.ok(signedWith(receiver.received[0]!, sub.secret), 'e1 signed with the creation secret');

  // copy-1 reads the next page (e2) and is slow to store its checkpoint. (Not the checkpoint it may
  // store meanwhile past e1's own delivery records, read before e2: that one is let through.)
  for (let i = 0; i < 400 && (await services.events.readStream(`webhook_deliveries-${sub.id}`)).length < 2; i++) await sleep(25);
  gateAfter = await services.events.headPosition();
  gate = new Promise<void>((r) => (release = r));
  await h.append(messageReceived(h.tenant, 2));
  await receiver.waitFor((r) => r.length >= 2);

  // Meanwhile: the secret is rotated with no grace ...
  const rotated = await h.app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks/${sub.id}/rotate-secret`,
    headers: bearer(h.tenant.key),
    payload: { graceSeconds: 0 },
  });
  t.equal(rotated.statusCode, 200, rotated.body);
  const newSecret: string = rotated.json().secret;
  // ... and copy-2 moves the shared checkpoint past e2 and the rotation.
  const copy2 = new WebhookDeliveryWorker(services, { ...opts, workerId: 'copy-2' });
  await copy2.start();
  t.ok(await copy2.waitForPosition(await services.events.headPosition(), 5_000), 'copy-2 is past the rotation');
  await copy2.stop();

  // copy-1's checkpoint write now loses the compare-and-set: it takes copy-2's state and goes on.
  gate = null;
  release();
  await sleep(200);

  const p = await h.append(messageReceived(h.tenant, 3));
  t.ok(await copy1.waitForPosition(p, 5_000));
  await receiver.waitFor((r) => r.length >= 3);
  const e3 = receiver.received[2]!;
  t.equal(signaturesOf(e3)?.v1.length, 1, 'one signature');
  t.ok(signedWith(e3, newSecret), 'signed with the new secret (a rotation with graceSeconds 0 "stops every old secret at once")');
  t.notOk(signedWith(e3, sub.secret), 'not with the rotated-out one');
});
