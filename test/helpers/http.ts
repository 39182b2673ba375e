import type { Test } from 'tap';
import { createApiKey, createSite } from '../../src/commands/tenancy.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import type { Services } from '../../src/services.ts';

/** What `inject` and `fetch` responses have in common for these checks. */
export interface ResponseLike {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Asserts the status and that the body is exactly `{ error: { code, message } }` with a non-empty message. */
export function expectError(t: Test, res: ResponseLike, status: number, code: string, what = ''): void {
  const label = what ? `${what}: ` : '';
  t.equal(res.statusCode, status, `${label}status ${status}`);
  t.match(String(res.headers['content-type'] ?? ''), /^application\/json/, `${label}JSON content type`);
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    t.fail(`${label}body is not JSON: ${res.body}`);
    return;
  }
  t.same(Object.keys(body as object), ['error'], `${label}only "error" at the top level`);
  const error = (body as { error: Record<string, unknown> }).error;
  t.same(Object.keys(error ?? {}).sort(), ['code', 'message'], `${label}error has exactly code and message`);
  t.equal(error?.code, code, `${label}code ${code}`);
  t.ok(typeof error?.message === 'string' && error.message.length > 0, `${label}a message`);
}

/** Waits until the read models include everything appended so far. */
export async function settle(services: Services): Promise<void> {
  const ok = await services.projections.waitFor(await services.events.headPosition(), 5_000);
  if (!ok) throw new Error('projections did not catch up within 5 s');
}

/** An API key with the given scopes (optionally restricted to one site), usable when it returns. */
export async function keyWith(services: Services, teamId: string, scopes: Scope[], siteId: string | null = null) {
  const key = await createApiKey(services, { teamId, name: `key ${scopes.join(' ')}`.slice(0, 120), scopes, siteId });
  await settle(services);
  return key;
}

/** Another site of an existing team, visible when it returns. */
export async function anotherSite(services: Services, teamId: string, domain = 'second.example.test') {
  const site = await createSite(services, { teamId, domain, plan: 'pro' }, services.config.MAIL_DOMAIN);
  await settle(services);
  return site.siteId;
}

export const webhooksPath = (siteId: string) => `/api/v1/sites/${siteId}/outreach/webhooks`;

export const validBody = (overrides: Record<string, unknown> = {}) => ({
  label: 'crm',
  url: 'https://example.com/hooks/outreach',
  eventTypes: ['outreach.reply_sent'],
  ...overrides,
});
