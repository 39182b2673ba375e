import t, { type Test } from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { createSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import { listSubscriptionsForSite } from '../../src/readModels/webhookSubscriptions.ts';
import { Browser, formFields } from '../oauth/helpers.ts';
import { startInboxDashboard } from './dashboardHelpers.ts';

/**
 * A site without an active licence: REST answers 403 SITE_NOT_LICENSED to every call on it but the
 * list and the deletion of its webhook subscriptions, and the dashboard refuses the same (its inbox,
 * agents and webhook forms), with a page that says why. Nothing is written and no mail goes out;
 * licensed again, the same forms work.
 */
const d = await startInboxDashboard();
t.teardown(() => d.close());
const { tenant, app, issuer } = d;
const conversationId = await d.pitch();
const existing = await createSubscription(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'crm', url: 'https://hooks.example.com/a', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
const deletable = await createSubscription(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, label: 'old crm', url: 'https://hooks.example.com/old', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
const licensed = async (value: boolean) => {
  const { position } = await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { licensed: value } });
  await app.services.projections.waitFor(position!, 5_000);
};
const browser = new Browser(issuer);
if ((await browser.signIn(d.ownerEmail)).status !== 303) throw new Error('sign-in failed');
const csrf = formFields((await browser.request('/dashboard')).text, '/dashboard/sign-out').csrf!;
const convPath = `/dashboard/inbox/${tenant.siteId}/${conversationId}`;
const refusedPage = (t: Test, res: { status: number; text: string }, what: string) => {
  t.equal(res.status, 403, `${what}: 403`);
  t.match(res.text, /has no active licence/, `${what}: says why`);
};

t.test('unlicensed: every page and action of the site is refused, nothing is written, no mail is sent', async (t) => {
  await licensed(false);
  refusedPage(t, await browser.request(`/dashboard/inbox?site=${tenant.siteId}`), 'the inbox list');
  refusedPage(t, await browser.request(convPath), 'a conversation');
  refusedPage(t, await browser.request(`${convPath}/reply`, { form: { csrf, text: 'A reply from an unlicensed site', idempotency_key: 'k1' } }), 'a reply');
  refusedPage(t, await browser.request(`${convPath}/status`, { form: { csrf, status: 'declined' } }), 'a status change');
  refusedPage(t, await browser.request(`/dashboard/sites/${tenant.siteId}/webhooks`, { form: { csrf, label: 'x', url: 'https://hooks.example.com/b', event_types: 'outreach.reply_sent' } }), 'a webhook create');
  refusedPage(t, await browser.request(`/dashboard/sites/${tenant.siteId}/webhooks-switch`, { form: { csrf } }), 'the webhooks switch');
  refusedPage(t, await browser.request(`/dashboard/webhooks/${existing.subscriptionId}/rotate`, { form: { csrf, grace_seconds: '0' } }), 'a secret rotation');
  refusedPage(t, await browser.request(`/dashboard/webhooks/${existing.subscriptionId}/edit`, { form: { csrf, label: 'y', url: 'https://hooks.example.com/c', event_types: 'outreach.reply_sent' } }), 'a webhook edit');
  refusedPage(t, await browser.request(`/dashboard/agents/${tenant.siteId}/ai_prompt`, { form: { csrf, settings: '{"isActive":true}' } }), 'agent settings');
  const agents = await browser.request('/dashboard/agents');
  t.equal(agents.status, 200, 'the agents page still lists the site');
  t.match(agents.text, /No active licence: this site's data and forms are closed/, 'and says why it shows nothing of it');
  const hooks = await browser.request('/dashboard/webhooks');
  t.equal(hooks.status, 200, 'the webhooks page');
  t.match(hooks.text, /No active licence: no new subscription or change/, 'says what is closed');
  t.match(hooks.text, 'hooks.example.com/a', "lists the subscriptions the site's events still go to (as REST does)");
  t.notMatch(hooks.text, `action="/dashboard/sites/${tenant.siteId}/webhooks"`, 'no create form');
  t.notMatch(hooks.text, `action="/dashboard/webhooks/${existing.subscriptionId}/edit"`, 'no edit form');
  t.notMatch(hooks.text, `action="/dashboard/webhooks/${existing.subscriptionId}/rotate"`, 'no rotation form');
  t.notMatch(hooks.text, `action="/dashboard/sites/${tenant.siteId}/webhooks-switch"`, 'no switch');
  t.match(hooks.text, `action="/dashboard/webhooks/${deletable.subscriptionId}/delete"`, 'a delete form');
  const deleted = await browser.request(`/dashboard/webhooks/${deletable.subscriptionId}/delete`, { form: { csrf } });
  t.equal(deleted.status, 303, 'a webhook delete goes through');

  const subs = await listSubscriptionsForSite(app.services.readModels, tenant.siteId);
  t.same(subs.map((x) => [x.label, x.url, x.secret_prefix]), [['crm', 'https://hooks.example.com/a', existing.created.secretPrefix]], 'the other subscription is as it was');
  const types = (await app.services.events.readStream(conversationStream(conversationId))).map((e) => e.type);
  t.notOk(types.some((x) => /Reply|StatusChanged/.test(x)), `nothing recorded on the conversation: ${types.join(',')}`);
  t.equal(d.sink.received.length, 0, 'no mail sent');
});

t.test('licensed again: the same pages answer', async (t) => {
  await licensed(true);
  t.equal((await browser.request(`/dashboard/inbox?site=${tenant.siteId}`)).status, 200, 'the inbox list');
  const conv = await browser.request(convPath);
  t.equal(conv.status, 200, 'the conversation');
  const rotated = await browser.request(`/dashboard/webhooks/${existing.subscriptionId}/rotate`, { form: { csrf, grace_seconds: '0' } });
  t.equal(rotated.status, 200, 'a secret rotation');
});
