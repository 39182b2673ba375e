import t from 'tap';
import { DEFAULT_SITE_SETTINGS, type SiteEvent, SiteRuleError, siteDecider } from '../../src/domain/site.ts';
import { given } from '../helpers/givenWhenThen.ts';

const now = '2026-01-15T12:00:00.000Z';
const later = '2026-01-16T08:30:00.000Z';
const SiteCreated: SiteEvent = {
  type: 'SiteCreated',
  data: {
    siteId: 'S1',
    teamId: 'T1',
    domain: 'example.test',
    plan: 'pro',
    forwardingToken: 'abc123',
    licensed: true,
    sendingDomainVerified: false,
    aiCredits: 0,
    dailyIngestionCap: 500,
    dailyExtractionCap: 100,
    createdAt: now,
  },
};
const change = (changes: Record<string, unknown>) =>
  ({ type: 'ChangeSiteSettings', data: { siteId: 'S1', changes, now: later } }) as const;
const changed = (changes: Record<string, unknown>): SiteEvent => ({ type: 'SiteSettingsChanged', data: { siteId: 'S1', changes, changedAt: later } });

t.test('CreateSite', async (t) => {
  t.test('given no site, when CreateSite, then SiteCreated with the defaults (licensed, not verified, no credits, caps 500/100)', async () => {
    given(siteDecider, [])
      .when({ type: 'CreateSite', data: { siteId: 'S1', teamId: 'T1', domain: 'example.test', plan: 'pro', forwardingToken: 'abc123', now } })
      .then([SiteCreated]);
    t.same(DEFAULT_SITE_SETTINGS, { licensed: true, sendingDomainVerified: false, aiCredits: 0, dailyIngestionCap: 500, dailyExtractionCap: 100 });
  });
  t.test('given a site, when CreateSite again, then it is refused', async () => {
    given(siteDecider, [SiteCreated])
      .when({ type: 'CreateSite', data: { siteId: 'S1', teamId: 'T1', domain: 'example.test', plan: 'pro', forwardingToken: 'x', now } })
      .thenThrows(SiteRuleError, /already exists/);
  });
});

t.test('ChangeSiteSettings', async (t) => {
  for (const [name, changes] of [
    ['plan', { plan: 'advanced' }],
    ['licence', { licensed: false }],
    ['sending domain verified', { sendingDomainVerified: true }],
    ['AI credits', { aiCredits: 250 }],
    ['daily ingestion cap', { dailyIngestionCap: 10 }],
    ['daily extraction cap', { dailyExtractionCap: 0 }],
  ] as const) {
    t.test(`given a site, when its ${name} changes, then SiteSettingsChanged with only that setting`, async () => {
      given(siteDecider, [SiteCreated]).when(change(changes)).then([changed(changes)]);
    });
  }
  t.test('given a site, when the change repeats the current values, then nothing happens', async () => {
    given(siteDecider, [SiteCreated]).when(change({ plan: 'pro', licensed: true, aiCredits: 0 })).then([]);
  });
  t.test('given a site, when nothing is asked to change, then nothing happens', async () => {
    given(siteDecider, [SiteCreated]).when(change({})).then([]);
  });
  t.test('given a site, when a change mixes new and current values, then only the new values are recorded', async () => {
    given(siteDecider, [SiteCreated])
      .when(change({ plan: 'pro', licensed: false, aiCredits: 5, sendingDomainVerified: undefined }))
      .then([changed({ licensed: false, aiCredits: 5 })]);
  });
  t.test('given an unlicensed site, when licensed again, then SiteSettingsChanged; licensing twice is a no-op', async () => {
    const history = [SiteCreated, changed({ licensed: false })];
    given(siteDecider, history).when(change({ licensed: true })).then([changed({ licensed: true })]);
    given(siteDecider, [...history, changed({ licensed: true })]).when(change({ licensed: true })).then([]);
  });
  t.test('given no site, when ChangeSiteSettings, then it is refused', async () => {
    given(siteDecider, []).when(change({ plan: 'pro' })).thenThrows(SiteRuleError, /not found/);
  });
});
