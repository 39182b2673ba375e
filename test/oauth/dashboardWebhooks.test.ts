import t from 'tap';
import { getSite } from '../../src/readModels/sites.ts';
import { bearer } from '../helpers/testApp.ts';
import { Browser, addTeamUser, formFields, startOAuthApp } from './helpers.ts';

t.test('dashboard webhooks page: create (secret once), edit, rotate, switch, delete; escaped; members only look', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  await browser.signIn(ownerEmail);
  const api = async () =>
    (await (await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: bearer(tenant.key) })).json()) as { subscriptions: Array<Record<string, any>> };

  let pageText = (await browser.request('/dashboard/webhooks')).text;
  const createAction = `/dashboard/sites/${tenant.siteId}/webhooks`;
  const created = await browser.request(createAction, {
    // Pasted with a line break at the end: the form trims it.
    form: { ...formFields(pageText, createAction), label: '<script>alert(1)</script>', url: 'https://hooks.example.com/in\n', event_types: ['outreach.reply_sent', 'outreach.message_received'] },
  });
  t.equal(created.status, 201, created.text.slice(0, 500));
  const secret = /id="webhook_secret">(svc_wh_[A-Za-z0-9_-]+)</.exec(created.text)?.[1];
  t.ok(secret, 'the secret is shown once');
  const [sub] = (await api()).subscriptions;
  t.equal(sub?.label, '<script>alert(1)</script>');
  t.equal(sub?.url, 'https://hooks.example.com/in', 'stored trimmed');
  t.same(sub?.event_types, ['outreach.reply_sent', 'outreach.message_received']);

  pageText = (await browser.request('/dashboard/webhooks')).text;
  t.notMatch(pageText, /<script>alert/, 'the label is escaped');
  t.match(pageText, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.notOk(pageText.includes(secret!), 'the page never shows the secret again');

  const bad = await browser.request(createAction, { form: { ...formFields(pageText, createAction), label: 'x', url: 'https://127.0.0.1/hook', event_types: 'outreach.reply_sent' } });
  t.equal(bad.status, 400, 'a loopback URL is refused as in the API');
  const noTypes = await browser.request(createAction, { form: { ...formFields(pageText, createAction), label: 'x', url: 'https://hooks.example.com/a' } });
  t.equal(noTypes.status, 400);
  t.match(noTypes.text, /Choose one or more event types/);
  const nul = await browser.request(createAction, { form: { ...formFields(pageText, createAction), label: 'a\u0000b', url: 'https://hooks.example.com/a', event_types: 'outreach.reply_sent' } });
  t.equal(nul.status, 400, 'a NUL in the label is refused, as in the API');
  t.match(nul.text, /The label must be one line of text: no line break, NUL or other control character/);
  const invisible = await browser.request(createAction, { form: { ...formFields(pageText, createAction), label: '\u200b', url: 'https://hooks.example.com/a', event_types: 'outreach.reply_sent' } });
  t.equal(invisible.status, 400, 'a label of a zero-width space is blank');
  t.match(invisible.text, /The label must be 1 to 120 characters/);

  const editAction = `/dashboard/webhooks/${sub!.id}/edit`;
  const edited = await browser.request(editAction, { form: { ...formFields(pageText, editAction), label: 'crm', url: 'https://hooks.example.com/v2', event_types: 'outreach.contact_suppressed' } });
  t.equal(edited.status, 303);
  const after = (await api()).subscriptions[0]!;
  t.same([after.label, after.url, after.event_types], ['crm', 'https://hooks.example.com/v2', ['outreach.contact_suppressed']], 'edited');
  const ssrf = await browser.request(editAction, { form: { ...formFields(pageText, editAction), label: 'crm', url: 'https://169.254.169.254/x', event_types: 'outreach.reply_sent' } });
  t.equal(ssrf.status, 400, 'an edit to a metadata address is refused');
  const refusedForm = ssrf.text.slice(ssrf.text.indexOf(`action="${editAction}"`), ssrf.text.indexOf('</form>', ssrf.text.indexOf(`action="${editAction}"`)));
  t.match(refusedForm, /name="url" value="https:\/\/169\.254\.169\.254\/x"/, 'the refused edit shows what was typed, not the stored values');
  t.match(refusedForm, /value="outreach\.reply_sent" checked/, 'its event types too');
  t.notMatch(refusedForm, /value="outreach\.contact_suppressed" checked/);

  pageText = (await browser.request('/dashboard/webhooks')).text;
  const rotateAction = `/dashboard/webhooks/${sub!.id}/rotate`;
  const rotated = await browser.request(rotateAction, { form: { ...formFields(pageText, rotateAction), grace_seconds: '600' } });
  t.equal(rotated.status, 200);
  const newSecret = /id="webhook_secret">(svc_wh_[A-Za-z0-9_-]+)</.exec(rotated.text)?.[1];
  t.ok(newSecret && newSecret !== secret, 'a new secret, shown once');
  t.match(rotated.text, /keeps signing too until/);
  t.equal((await browser.request(rotateAction, { form: { ...formFields(pageText, rotateAction), grace_seconds: '90000' } })).status, 400, 'grace over 24 h refused');
  // From the page shown again: the first page's form, sent twice, is answered "already sent" (dashboardSentOnce).
  const again = await browser.request(rotateAction, { form: { ...formFields((await browser.request('/dashboard/webhooks')).text, rotateAction), grace_seconds: '600' } });
  t.equal(again.status, 409, 'a second graceful rotation during the grace: a problem page, not a failure');
  t.match(again.text, /still signs until/);

  const switchAction = `/dashboard/sites/${tenant.siteId}/webhooks-switch`;
  t.match(pageText, /Outbound webhooks: <strong>on<\/strong>/);
  t.equal((await browser.request(switchAction, { form: formFields(pageText, switchAction) })).status, 303);
  t.equal((await getSite(app.services.readModels, tenant.siteId))?.webhooksEnabled, false, 'switched off');
  t.match((await browser.request('/dashboard/webhooks')).text, /Outbound webhooks: <strong>off<\/strong>/);

  const memberEmail = await addTeamUser(app, tenant.teamId, 'member');
  const member = new Browser(issuer);
  await member.signIn(memberEmail);
  const memberPage = (await member.request('/dashboard/webhooks')).text;
  t.match(memberPage, /crm/, 'members see the subscriptions');
  t.notMatch(memberPage, /Delete crm/, 'without the forms');
  const csrf = formFields(memberPage, '/dashboard/sign-out').csrf!;
  t.equal((await member.request(`/dashboard/webhooks/${sub!.id}/delete`, { form: { csrf } })).status, 403, 'and cannot delete');

  const deleteAction = `/dashboard/webhooks/${sub!.id}/delete`;
  t.equal((await browser.request(deleteAction, { form: formFields(pageText, deleteAction) })).status, 303);
  t.same((await api()).subscriptions, [], 'deleted');
  t.equal((await browser.request(deleteAction, { form: formFields(pageText, deleteAction) })).status, 404, 'a second delete: not found');

  // An unknown subscription: the 404 page, and no error behind it (the refusal page, once awaited as
  // the helper's result, resolved to undefined and threw after the answer was sent).
  const logged: unknown[] = [];
  const log = app.fastify.log as unknown as { error: (...args: unknown[]) => void };
  const original = log.error;
  log.error = (...args: unknown[]) => void logged.push(args);
  t.teardown(() => void (log.error = original));
  for (const action of ['edit', 'rotate', 'delete']) {
    const path = `/dashboard/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV/${action}`;
    const answer = await browser.request(path, { form: { ...formFields(pageText, deleteAction), label: 'x', url: 'https://hooks.example.com/a', event_types: 'outreach.reply_sent', grace_seconds: '0' } });
    t.equal(answer.status, 404, `${action} of an unknown subscription`);
    t.match(answer.text, /Webhook subscription not found/);
  }
  t.same(logged, [], 'nothing logged as an error');
});
