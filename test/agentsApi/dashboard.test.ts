import t from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { Browser, addTeamUser, formFields, startOAuthApp } from '../oauth/helpers.ts';

/** The settings textarea's text in the form posting to `action`. */
function settingsIn(page: string, action: string): string {
  const start = page.indexOf(`action="${action}"`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const text = /<textarea[^>]*name="settings"[^>]*>([^<]*)<\/textarea>/.exec(form)?.[1];
  return (text ?? '').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

t.test('dashboard agents page: toggles, settings form, run button, recent runs; CSRF and roles', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  await browser.signIn(ownerEmail);
  const action = (key: string, run = false) => `/dashboard/agents/${tenant.siteId}/${key}${run ? '/run' : ''}`;

  const listed = await browser.request('/dashboard/agents');
  t.equal(listed.status, 200);
  for (const template of ['Search Opportunity Agent', 'AI Opportunity Agent', 'Article Boost Agent', 'Interlinking Agent', 'Site Performance Agent', 'Outreach Agent']) {
    t.match(listed.text, template);
  }
  t.match(listed.text, /No runs yet/);
  const csrf = formFields(listed.text, action('outreach')).csrf!;

  t.equal((await browser.request(action('outreach'), { form: { csrf: 'forged', is_active: 'on' } })).status, 403, 'CSRF checked');

  const saved = await browser.request(action('outreach'), { form: { csrf, is_active: 'on', cadence_hours: '6', settings: '{"dailySendCap": 7, "tone": "brief"}' } });
  t.equal(saved.status, 303);
  const after = await browser.request('/dashboard/agents');
  t.match(after.text, /&quot;dailySendCap&quot;:7/);
  t.match(after.text, /value="6"/);

  const badJson = await browser.request(action('outreach'), { form: { csrf, settings: '{nope' } });
  t.equal(badJson.status, 400);
  t.match(badJson.text, /must be a JSON object/);
  t.equal(settingsIn(badJson.text, action('outreach')), '{nope', 'the refused text is kept in its form');
  t.match(badJson.text, /aria-invalid="true">\{nope<\/textarea>/);
  t.equal(settingsIn(badJson.text, action('interlinking')), settingsIn(after.text, action('interlinking')), 'the other forms show what is stored');
  const unknown = await browser.request(action('outreach'), { form: { csrf, is_active: 'on', cadence_hours: '12', settings: '{"colour": "red"}' } });
  t.equal(unknown.status, 400);
  t.match(unknown.text, /no setting &quot;colour&quot;/);
  t.equal(settingsIn(unknown.text, action('outreach')), '{"colour": "red"}', 'a refused setting is kept too');
  t.match(unknown.text, /value="12"/, 'with the cadence as sent');
  const badCadence = await browser.request(action('outreach'), { form: { csrf, cadence_hours: 'soon', settings: '{"tone": "formal"}' } });
  t.equal(badCadence.status, 400);
  t.match(badCadence.text, /value="soon" aria-invalid="true"/, 'the refused cadence is kept and marked');
  t.equal(settingsIn(badCadence.text, action('outreach')), '{"tone": "formal"}', 'with the settings as typed');
  t.notMatch(badCadence.text, /name="settings" rows="3" aria-invalid/, 'the settings are not marked');
  const stored = await browser.request('/dashboard/agents');
  t.match(stored.text, /value="6"/, 'nothing refused was stored');
  t.equal((await browser.request(`/dashboard/agents/${tenant.siteId}/nope`, { form: { csrf } })).status, 404);

  const inactive = await browser.request(action('interlinking', true), { form: { csrf } });
  t.equal(inactive.status, 409);
  t.match(inactive.text, /not active/);
  const unverified = await browser.request(action('outreach', true), { form: { csrf } });
  t.equal(unverified.status, 409, 'an outreach run from a site whose sending domain is not verified');
  t.match(unverified.text, /verify its sending domain first/);
  const { position } = await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { sendingDomainVerified: true } });
  await app.services.projections.waitFor(position!, 5_000);
  const ran = await browser.request(action('outreach', true), { form: { csrf } });
  t.equal(ran.status, 202);
  t.match(ran.text, /Run [0-9A-Z]+ of outreach queued/);
  t.match(ran.text, /<td>outreach<\/td><td>on_demand<\/td><td>queued<\/td>/, 'listed under recent runs');

  const memberEmail = await addTeamUser(app, tenant.teamId, 'member');
  const member = new Browser(issuer);
  await member.signIn(memberEmail);
  const memberPage = await member.request('/dashboard/agents');
  t.equal(memberPage.status, 200);
  t.notMatch(memberPage.text, /Run outreach now/, 'members see no buttons');
  const memberCsrf = /name="csrf" value="([^"]+)"/.exec(memberPage.text)![1]!;
  t.equal((await member.request(action('outreach', true), { form: { csrf: memberCsrf } })).status, 403);
});
