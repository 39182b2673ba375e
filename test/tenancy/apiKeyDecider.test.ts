import t from 'tap';
import { API_KEY_USE_RESOLUTION_MS, type ApiKeyCommand, type ApiKeyEvent, ApiKeyRuleError, apiKeyDecider } from '../../src/domain/apiKey.ts';
import { given } from '../helpers/givenWhenThen.ts';

const now = '2026-01-15T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(now) + ms).toISOString();
const hash = 'a'.repeat(64);
const ApiKeyCreated: ApiKeyEvent = {
  type: 'ApiKeyCreated',
  data: { apiKeyId: 'K1', teamId: 'T1', name: 'ci', scopes: ['webhooks:read'], siteId: 'S1', keyHash: hash, createdAt: now },
};
const ApiKeyRevoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { apiKeyId: 'K1', teamId: 'T1', revokedAt: at(1000) } };
const used = (ms: number): ApiKeyEvent => ({ type: 'ApiKeyUsed', data: { apiKeyId: 'K1', usedAt: at(ms) } });
const create: ApiKeyCommand = { type: 'CreateApiKey', data: { apiKeyId: 'K1', teamId: 'T1', name: 'ci', scopes: ['webhooks:read'], siteId: 'S1', keyHash: hash, now } };
const recordUse = (ms: number): ApiKeyCommand => ({ type: 'RecordApiKeyUse', data: { apiKeyId: 'K1', now: at(ms) } });

t.test('CreateApiKey', async (t) => {
  t.test('given no key, when CreateApiKey, then ApiKeyCreated holding only the hash', async () => {
    given(apiKeyDecider, []).when(create).then([ApiKeyCreated]);
  });
  t.test('given a key, when CreateApiKey with the same id, then it is refused', async () => {
    given(apiKeyDecider, [ApiKeyCreated]).when(create).thenThrows(ApiKeyRuleError, /already exists/);
  });
  t.test('given a revoked key, when CreateApiKey with the same id, then it is refused', async () => {
    given(apiKeyDecider, [ApiKeyCreated, ApiKeyRevoked]).when(create).thenThrows(ApiKeyRuleError, /already exists/);
  });
});

t.test('RevokeApiKey', async (t) => {
  const revoke = { type: 'RevokeApiKey', data: { apiKeyId: 'K1', now: at(1000) } } as const;
  t.test('given an active key, when RevokeApiKey, then ApiKeyRevoked with its team', async () => {
    given(apiKeyDecider, [ApiKeyCreated]).when(revoke).then([ApiKeyRevoked]);
  });
  t.test('given a revoked key, when RevokeApiKey again, then nothing happens', async () => {
    given(apiKeyDecider, [ApiKeyCreated, ApiKeyRevoked]).when(revoke).then([]);
  });
  t.test('given no key, when RevokeApiKey, then it is refused', async () => {
    given(apiKeyDecider, []).when(revoke).thenThrows(ApiKeyRuleError, /not found/);
  });
});

t.test('RecordApiKeyUse', async (t) => {
  t.test('given a never-used key, when used, then ApiKeyUsed', async () => {
    given(apiKeyDecider, [ApiKeyCreated]).when(recordUse(5_000)).then([used(5_000)]);
  });
  t.test('given a use less than the resolution ago, when used again, then nothing happens', async () => {
    given(apiKeyDecider, [ApiKeyCreated, used(5_000)]).when(recordUse(5_000 + API_KEY_USE_RESOLUTION_MS - 1)).then([]);
  });
  t.test('given a use exactly the resolution ago, when used again, then ApiKeyUsed', async () => {
    const next = 5_000 + API_KEY_USE_RESOLUTION_MS;
    given(apiKeyDecider, [ApiKeyCreated, used(5_000)]).when(recordUse(next)).then([used(next)]);
  });
  t.test('given a revoked key, when used, then nothing happens', async () => {
    given(apiKeyDecider, [ApiKeyCreated, ApiKeyRevoked]).when(recordUse(120_000)).then([]);
  });
  t.test('given no key, when used, then nothing happens', async () => {
    given(apiKeyDecider, []).when(recordUse(0)).then([]);
  });
});
