import { type Decider, assertNever } from './decider.ts';
import type { Scope } from './scopes.ts';

export const apiKeyStream = (apiKeyId: string) => `apikey-${apiKeyId}`;

/** How often a key's use is recorded as an event: last-used time is kept to this precision. */
export const API_KEY_USE_RESOLUTION_MS = 60_000;

export type ApiKeyEvent =
  | {
      type: 'ApiKeyCreated';
      data: { apiKeyId: string; teamId: string; name: string; scopes: Scope[]; siteId: string | null; keyHash: string; createdAt: string };
    }
  | { type: 'ApiKeyRevoked'; data: { apiKeyId: string; teamId: string; revokedAt: string } }
  | { type: 'ApiKeyUsed'; data: { apiKeyId: string; usedAt: string } };

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      data: { apiKeyId: string; teamId: string; name: string; scopes: Scope[]; siteId: string | null; keyHash: string; now: string };
    }
  | { type: 'RevokeApiKey'; data: { apiKeyId: string; now: string } }
  | { type: 'RecordApiKeyUse'; data: { apiKeyId: string; now: string } };

export type ApiKeyState =
  | { status: 'none' }
  | { status: 'active' | 'revoked'; teamId: string; lastUsedAt: string | null };

export class ApiKeyRuleError extends Error {}

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, ApiKeyEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyCreated':
        return { status: 'active', teamId: event.data.teamId, lastUsedAt: null };
      case 'ApiKeyRevoked':
        return state.status === 'none' ? state : { ...state, status: 'revoked' };
      case 'ApiKeyUsed':
        return state.status === 'none' ? state : { ...state, lastUsedAt: event.data.usedAt };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateApiKey': {
        if (state.status !== 'none') throw new ApiKeyRuleError('API key already exists');
        const { now, ...key } = command.data;
        return [{ type: 'ApiKeyCreated', data: { ...key, createdAt: now } }];
      }
      case 'RevokeApiKey':
        if (state.status === 'none') throw new ApiKeyRuleError('API key not found');
        if (state.status === 'revoked') return [];
        return [{ type: 'ApiKeyRevoked', data: { apiKeyId: command.data.apiKeyId, teamId: state.teamId, revokedAt: command.data.now } }];
      case 'RecordApiKeyUse': {
        if (state.status !== 'active') return [];
        const last = state.lastUsedAt ? Date.parse(state.lastUsedAt) : -Infinity;
        if (Date.parse(command.data.now) - last < API_KEY_USE_RESOLUTION_MS) return [];
        return [{ type: 'ApiKeyUsed', data: { apiKeyId: command.data.apiKeyId, usedAt: command.data.now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
