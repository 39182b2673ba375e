import t from 'tap';
import type { ApiKeyEvent } from '../../src/domain/apiKey.ts';
import type { SiteEvent } from '../../src/domain/site.ts';
import { apiKeysProjection, sitesProjection } from '../../src/projections/tenancy.ts';
import { API_KEYS, API_KEYS_BY_HASH } from '../../src/readModels/apiKeys.ts';
import { SITES } from '../../src/readModels/sites.ts';
import { projectEvents } from '../helpers/projectionSpec.ts';

const siteCreated = (siteId: string, createdAt: string): SiteEvent => ({
  type: 'SiteCreated',
  data: {
    siteId,
    teamId: 'team-1',
    domain: `${siteId}.test`,
    forwardingToken: `token-${siteId}`,
    plan: 'starter',
    licensed: true,
    sendingDomainVerified: false,
    aiCredits: 0,
    dailyIngestionCap: 500,
    dailyExtractionCap: 100,
    createdAt,
  },
});

t.test('sites projection: a creation, then settings changed one at a time; replayed twice, the same documents', async (t) => {
  const history: SiteEvent[] = [
    siteCreated('site-a', '2025-01-01T00:00:00.000Z'),
    siteCreated('site-b', '2025-01-01T00:00:01.000Z'),
    { type: 'SiteSettingsChanged', data: { siteId: 'site-a', changes: { plan: 'advanced', aiCredits: 40 }, changedAt: '2025-01-01T00:01:00.000Z' } },
    { type: 'SiteSettingsChanged', data: { siteId: 'site-a', changes: { licensed: false }, changedAt: '2025-01-01T00:02:00.000Z' } },
    { type: 'SiteSettingsChanged', data: { siteId: 'site-b', changes: { sendingDomainVerified: true }, changedAt: '2025-01-01T00:03:00.000Z' } },
    // A change to a site the projection never saw created writes nothing.
    { type: 'SiteSettingsChanged', data: { siteId: 'site-x', changes: { aiCredits: 1 }, changedAt: '2025-01-01T00:04:00.000Z' } },
  ];
  const p = await projectEvents(t, sitesProjection, history);
  const site = (siteId: string, createdAt: string) => {
    const { siteId: id, ...rest } = (siteCreated(siteId, createdAt) as Extract<SiteEvent, { type: 'SiteCreated' }>).data;
    return { id, ...rest };
  };
  const expected = {
    [SITES]: [
      { ...site('site-a', '2025-01-01T00:00:00.000Z'), plan: 'advanced', aiCredits: 40, licensed: false },
      { ...site('site-b', '2025-01-01T00:00:01.000Z'), sendingDomainVerified: true },
    ],
  };
  t.same(await p.documents(), expected, 'each site with its settings as last changed');
  for (let round = 1; round <= 2; round++) {
    t.ok(await p.replay(), `round ${round}: the replay batch commits`);
    t.same(await p.documents(), expected, `round ${round}: identical documents`);
  }
});

t.test('apiKeys projection: creation with its lookup by hash, use and revocation; replayed twice, the same documents', async (t) => {
  const history: ApiKeyEvent[] = [
    {
      type: 'ApiKeyCreated',
      data: { apiKeyId: 'key-a', teamId: 'team-1', name: 'a', scopes: ['webhooks:read'], siteId: null, keyHash: 'hash-a', createdAt: '2025-01-01T00:00:00.000Z' },
    },
    {
      type: 'ApiKeyCreated',
      data: { apiKeyId: 'key-b', teamId: 'team-1', name: 'b', scopes: ['webhooks:write'], siteId: 'site-1', keyHash: 'hash-b', createdAt: '2025-01-01T00:00:01.000Z' },
    },
    { type: 'ApiKeyUsed', data: { apiKeyId: 'key-a', usedAt: '2025-01-01T00:01:00.000Z' } },
    { type: 'ApiKeyUsed', data: { apiKeyId: 'key-a', usedAt: '2025-01-01T00:02:00.000Z' } },
    { type: 'ApiKeyRevoked', data: { apiKeyId: 'key-b', teamId: 'team-1', revokedAt: '2025-01-01T00:03:00.000Z' } },
  ];
  const p = await projectEvents(t, apiKeysProjection, history);
  const expected = {
    [API_KEYS]: [
      {
        id: 'key-a',
        teamId: 'team-1',
        name: 'a',
        scopes: ['webhooks:read'],
        siteId: null,
        keyHash: 'hash-a',
        revoked: false,
        revokedAt: null,
        lastUsedAt: '2025-01-01T00:02:00.000Z',
        createdAt: '2025-01-01T00:00:00.000Z',
      },
      {
        id: 'key-b',
        teamId: 'team-1',
        name: 'b',
        scopes: ['webhooks:write'],
        siteId: 'site-1',
        keyHash: 'hash-b',
        revoked: true,
        revokedAt: '2025-01-01T00:03:00.000Z',
        lastUsedAt: null,
        createdAt: '2025-01-01T00:00:01.000Z',
      },
    ],
    [API_KEYS_BY_HASH]: [
      { id: 'hash-a', apiKeyId: 'key-a' },
      { id: 'hash-b', apiKeyId: 'key-b' },
    ],
  };
  t.same(await p.documents(), expected, 'keys with their last use and revocation; the hash lookup');
  for (let round = 1; round <= 2; round++) {
    t.ok(await p.replay(), `round ${round}: the replay batch commits`);
    t.same(await p.documents(), expected, `round ${round}: identical documents`);
  }
});
