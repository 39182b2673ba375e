import { createHash, randomBytes } from 'node:crypto';
import { registerOAuthClient } from '../../src/commands/oauth.ts';
import { addUser } from '../../src/commands/tenancy.ts';
import type { TokenEndpointAuthMethod } from '../../src/domain/oauthClient.ts';
import type { Role } from '../../src/domain/team.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { type TestApp, type Tenant, createTenant, startTestApp } from '../helpers/testApp.ts';

export const PASSWORD = 'correct horse battery staple';

/** The service on a loopback port, its issuer (PUBLIC_BASE_URL) set to that port, with one tenant. */
export async function startOAuthApp(options: { clock?: Clock; dataDir?: string; env?: Record<string, string> } = {}): Promise<{ app: TestApp; tenant: Tenant; ownerEmail: string; issuer: string }> {
  const app = await startTestApp({ listen: true, clock: options.clock, dataDir: options.dataDir, env: options.env });
  (app.services.config as { PUBLIC_BASE_URL: string }).PUBLIC_BASE_URL = app.url;
  const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.test`;
  const tenant = await createTenant(app.services, { email: ownerEmail, password: PASSWORD });
  return { app, tenant, ownerEmail, issuer: app.url };
}

export async function addTeamUser(app: TestApp, teamId: string, role: Role): Promise<string> {
  const email = `${role}-${randomBytes(4).toString('hex')}@example.test`;
  const { position } = await addUser(app.services, { teamId, email, role, password: PASSWORD });
  await app.services.projections.waitFor(position!, 5_000);
  return email;
}

export async function registerClient(
  app: TestApp,
  tenant: Tenant,
  method: TokenEndpointAuthMethod,
  redirectUris = ['https://app.example.test/callback'],
): Promise<{ clientId: string; clientSecret: string | null }> {
  const r = await registerOAuthClient(app.services, { teamId: tenant.teamId, userId: tenant.ownerUserId, name: `App ${method}`, redirectUris, tokenEndpointAuthMethod: method });
  await app.services.projections.waitFor(r.position!, 5_000);
  return { clientId: r.clientId, clientSecret: r.clientSecret };
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const decodeEntities = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** Hidden and named inputs of the first form posting to `action`. */
export function formFields(page: string, action: string): Record<string, string> {
  const start = page.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action} in page:\n${page}`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const out: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]!] = decodeEntities(m[2]!);
  return out;
}

/** A user agent with a cookie jar, following no redirects: every hop is checked by the test. */
export class Browser {
  private cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async request(path: string, init: { method?: string; form?: Record<string, string | string[]>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const url = path.startsWith('http') ? path : this.base + path;
    const res = await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers };
  }

  async signIn(email: string, password = PASSWORD, returnTo?: string) {
    const form = await this.request(`/dashboard/sign-in${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`);
    const fields = formFields(form.text, '/dashboard/sign-in');
    return this.request('/dashboard/sign-in', { form: { ...fields, email, password } });
  }

  /** Opens the authorize URL and answers the consent screen; returns the final response (a redirect to the client). */
  async consent(authorizeUrl: string, decision: 'approve' | 'deny', siteIds: string[]) {
    const consent = await this.request(authorizeUrl);
    if (consent.status !== 200) return consent;
    const fields = formFields(consent.text, '/oauth/authorize');
    return this.request('/oauth/authorize', { form: { ...fields, decision, site_ids: siteIds } });
  }
}

export function authorizeUrl(
  issuer: string,
  params: { client_id: string; redirect_uri?: string; scope?: string; state?: string; code_challenge?: string; code_challenge_method?: string; response_type?: string },
) {
  const url = new URL('/oauth/authorize', issuer);
  const all = { response_type: 'code', redirect_uri: 'https://app.example.test/callback', state: 'st-' + randomBytes(6).toString('hex'), code_challenge_method: 'S256', ...params };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Runs the whole code flow with raw HTTP and returns the code, for refusal tests. */
export async function obtainCode(
  browser: Browser,
  issuer: string,
  client: { clientId: string },
  siteIds: string[],
  options: { scope?: string; redirectUri?: string } = {},
) {
  const { verifier, challenge } = pkce();
  const redirectUri = options.redirectUri ?? 'https://app.example.test/callback';
  const res = await browser.consent(
    authorizeUrl(issuer, { client_id: client.clientId, scope: options.scope ?? 'webhooks:read webhooks:write', code_challenge: challenge, redirect_uri: redirectUri }),
    'approve',
    siteIds,
  );
  if (res.status !== 303 || !res.location) throw new Error(`consent failed: ${res.status} ${res.text}`);
  const code = new URL(res.location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${res.location}`);
  return { code, verifier, redirectUri };
}

export async function tokenRequest(issuer: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${issuer}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

export const basicAuth = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
});
