import t from 'tap';
import { deleteOAuthClient, giveConsent, revokeGrant, sweepDeletedOAuthClient, undoIfClientDeleted } from '../../src/commands/oauth.ts';
import { DEPARTED_APPS } from '../../src/processors/webhookDelivery/departedApps.ts';
import { startWebhookWorker } from '../../src/processors/webhookDelivery/startWorker.ts';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { deleteOAuthClientAndSweep } from '../../src/http/dashboard/oauthClientDeletion.ts';
import { registerClient, startOAuthApp } from './helpers.ts';

const subscriptionOf = (teamId: string, siteId: string, clientId: string) => ({
  teamId,
  siteId,
  label: 'crm',
  url: 'https://example.com/hook',
  eventTypes: ['outreach.reply_sent' as const],
  createdByOauthClientId: clientId,
});

t.test('deleting a client also deletes a subscription its token created just before, not yet in the read models', async (t) => {
  const { app, tenant } = await startOAuthApp();
  t.teardown(() => app.close());
  const { clientId } = await registerClient(app, tenant, 'none');
  const { services } = app;

  await services.projections.stop(); // the read models now lag behind the log
  const { subscriptionId } = await createSubscription(services, subscriptionOf(tenant.teamId, tenant.siteId, clientId));
  const readModelsAt = async (position: bigint) => {
    services.projections.start();
    await services.projections.waitFor(position, 5_000);
  };
  await deleteOAuthClientAndSweep(services, { clientId, teamId: tenant.teamId, userId: tenant.ownerUserId }, readModelsAt);
  const stream = await services.events.readStream(`webhook_subscription-${subscriptionId}`);
  t.same(stream.map((e) => e.type), ['SubscriptionCreated', 'SubscriptionDeleted'], 'the sweep saw it');
  t.match(stream[1]!.metadata, { cause: { reason: 'client_deleted', clientId } }, 'and says why');
});

t.test('a subscription appended after its client was deleted is undone by the create path', async (t) => {
  const { app, tenant } = await startOAuthApp();
  t.teardown(() => app.close());
  const { services } = app;
  const kept = await registerClient(app, tenant, 'none');
  const gone = await registerClient(app, tenant, 'none');
  await deleteOAuthClientAndSweep(services, { clientId: gone.clientId, teamId: tenant.teamId, userId: tenant.ownerUserId }, async () => {});

  const late = await createSubscription(services, subscriptionOf(tenant.teamId, tenant.siteId, gone.clientId));
  t.equal(await undoIfClientDeleted(services, { id: late.subscriptionId, siteId: tenant.siteId, clientId: gone.clientId }), true);
  const undone = await services.events.readStream(`webhook_subscription-${late.subscriptionId}`);
  t.same(undone.map((e) => e.type), ['SubscriptionCreated', 'SubscriptionDeleted']);
  t.match(undone[1]!.metadata, { cause: { reason: 'client_deleted', clientId: gone.clientId } });

  const fine = await createSubscription(services, subscriptionOf(tenant.teamId, tenant.siteId, kept.clientId));
  t.equal(await undoIfClientDeleted(services, { id: fine.subscriptionId, siteId: tenant.siteId, clientId: kept.clientId }), false, 'a live client keeps its subscription');
  t.same((await services.events.readStream(`webhook_subscription-${fine.subscriptionId}`)).map((e) => e.type), ['SubscriptionCreated']);
});

t.test('a deletion whose sweep was cut short is finished by the webhook worker from the log', async (t) => {
  const { app, tenant } = await startOAuthApp();
  t.teardown(() => app.close());
  const { services } = app;
  const gone = await registerClient(app, tenant, 'none');
  const kept = await registerClient(app, tenant, 'none');
  // The worker ran before (its checkpoint is stored) and is down when the dashboard's process crashes.
  await (await startWebhookWorker(services, undefined, { workerId: 'client-deletion-test' })).stop();
  t.ok(await services.readModels.getCheckpoint(DEPARTED_APPS));
  const orphan = await createSubscription(services, subscriptionOf(tenant.teamId, tenant.siteId, gone.clientId));
  const other = await createSubscription(services, subscriptionOf(tenant.teamId, tenant.siteId, kept.clientId));
  await deleteOAuthClient(services, { clientId: gone.clientId, teamId: tenant.teamId, userId: tenant.ownerUserId }); // and no sweep
  const typesOf = async (id: string) => (await services.events.readStream(`webhook_subscription-${id}`)).map((e) => e.type);
  t.same(await typesOf(orphan.subscriptionId), ['SubscriptionCreated'], 'the sweep was cut short');

  const worker = await startWebhookWorker(services, undefined, { workerId: 'client-deletion-test' });
  t.teardown(() => worker.stop());
  const deadline = Date.now() + 10_000;
  while ((await typesOf(orphan.subscriptionId)).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.same(await typesOf(orphan.subscriptionId), ['SubscriptionCreated', 'SubscriptionDeleted'], "the deleted client's subscription is deleted");
  t.match((await services.events.readStream(`webhook_subscription-${orphan.subscriptionId}`))[1]!.metadata, { cause: { reason: 'client_deleted', clientId: gone.clientId } });
  t.same(await typesOf(other.subscriptionId), ['SubscriptionCreated'], "another client's stays");
});

t.test("the sweep answers the latest of its writes: a grant revoked before does not pull its position back", async (t) => {
  const { app, tenant } = await startOAuthApp();
  t.teardown(() => app.close());
  const { services } = app;
  const { clientId } = await registerClient(app, tenant, 'none');
  const consent = () =>
    giveConsent(services, { clientId, teamId: tenant.teamId, userId: tenant.ownerUserId, siteIds: [tenant.siteId], scopes: ['inbox:read'], resource: null, redirectUri: 'https://app.example.test/callback', codeChallenge: 'x'.repeat(43) });
  const live = await consent();
  const revokedBefore = await consent();
  await revokeGrant(services, revokedBefore.grantId, 'revoked_by_team');
  // The already revoked grant comes last: its revocation is a no-op decided on an older position.
  const swept = await sweepDeletedOAuthClient(services, clientId, { grantIds: [live.grantId, revokedBefore.grantId], subscriptions: [] });
  const liveRevoked = (await services.events.readStream(`oauth_grant-${live.grantId}`)).at(-1)!;
  t.equal(liveRevoked.type, 'GrantRevoked');
  t.equal(swept.position, liveRevoked.position, "the live grant's revocation, the sweep's last write");
});
