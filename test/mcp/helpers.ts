import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentWorkWiring } from '../../src/agentWorkWiring.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { type TestApp, type Tenant, createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser, PASSWORD, authorizeUrl, pkce, registerClient, tokenRequest } from '../oauth/helpers.ts';
import { testCertificate } from '../webhooks/helpers.ts';

export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/** The service on a loopback port (issuer = its URL), trusting the test CA for metadata documents on 127.0.0.1. */
export async function startMcpApp(options: { env?: Record<string, string>; clock?: Clock; agentWork?: AgentWorkWiring } = {}) {
  const { caFile } = await testCertificate();
  const app = await startTestApp({
    listen: true,
    clock: options.clock,
    agentWork: options.agentWork,
    env: { OAUTH_CLIENT_METADATA_ALLOWED_RANGES: '127.0.0.1/32', OAUTH_CLIENT_METADATA_EXTRA_CA_FILE: caFile, ...options.env },
  });
  (app.services.config as { PUBLIC_BASE_URL: string }).PUBLIC_BASE_URL = app.url;
  const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.test`;
  const tenant = await createTenant(app.services, { email: ownerEmail, password: PASSWORD, sendingDomainVerified: true });
  const browser = new Browser(app.url);
  const signIn = await browser.signIn(ownerEmail);
  if (signIn.status !== 303) throw new Error(`sign-in failed: ${signIn.status}`);
  return { app, tenant, ownerEmail, browser, base: app.url, mcpUrl: `${app.url}/mcp` };
}

export interface Served {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** An HTTPS server on 127.0.0.1 (the test CA) serving client metadata documents; counts fetches per path. */
export async function startDocumentServer(): Promise<{
  origin: string;
  serve(path: string, answer: Served | ((origin: string) => Served)): string;
  fetches: Map<string, number>;
  close(): Promise<void>;
}> {
  const { cert, key } = await testCertificate();
  const routes = new Map<string, Served | ((origin: string) => Served)>();
  const fetches = new Map<string, number>();
  let origin = '';
  const server: Server = createServer({ cert, key }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (!route) return res.writeHead(404).end();
    const answer = typeof route === 'function' ? route(origin) : route;
    const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    serve(path, answer) {
      routes.set(path, answer);
      return origin + path;
    },
    fetches,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A metadata document that says what its URL says. */
export const clientDocument = (clientId: string, overrides: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'Desktop Assistant',
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...overrides,
});

/**
 * An OAuthClientProvider that does the browser part headlessly: when the SDK sends the user to the
 * authorize URL, a signed-in owner answers the consent screen and the redirect's code is kept.
 */
export class HeadlessProvider implements OAuthClientProvider {
  clientMetadataUrl?: string;
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** Every authorize URL the SDK built, and what the consent answered. */
  authorizations: Array<{ url: URL; consentPage: string; location: string | null }> = [];
  code: string | null = null;

  constructor(
    private readonly browser: Browser,
    private readonly siteIds: string[],
    options: { clientMetadataUrl?: string } = {},
  ) {
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Headless Test Client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return `st-${randomBytes(6).toString('hex')}`;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL) {
    const consentPage = await this.browser.request(url.toString());
    const entry = { url, consentPage: consentPage.text, location: null as string | null };
    this.authorizations.push(entry);
    if (consentPage.status !== 200) return;
    const answer = await this.browser.consent(url.toString(), 'approve', this.siteIds);
    entry.location = answer.location;
    this.code = answer.location ? new URL(answer.location).searchParams.get('code') : null;
  }
}

/** Connects the SDK client, doing the OAuth dance if the server asks for it (401 → consent → finishAuth → reconnect). */
export async function connectWithOAuth(mcpUrl: string, provider: HeadlessProvider): Promise<Client> {
  const first = new Client({ name: 'test', version: '1.0.0' });
  try {
    await first.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    return first;
  } catch (error) {
    if (!provider.code) throw error;
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await transport.finishAuth(provider.code);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    return client;
  }
}

/** The SDK client on a fixed bearer token (no provider: a 401 or 403 surfaces as an error). */
export async function connectWithToken(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/**
 * An access token by the raw code flow with a dashboard-registered public client: the scopes, the
 * sites and the resource (default: the MCP endpoint) chosen by the test.
 */
export async function obtainToken(
  ctx: { app: TestApp; tenant: Tenant; browser: Browser; base: string },
  options: { scope: string; siteIds?: string[]; resource?: string | null; clientId?: string },
): Promise<string> {
  const client = options.clientId ? { clientId: options.clientId } : await registerClient(ctx.app, ctx.tenant, 'none', [REDIRECT_URI]);
  const { verifier, challenge } = pkce();
  const url = new URL(authorizeUrl(ctx.base, { client_id: client.clientId, scope: options.scope, code_challenge: challenge, redirect_uri: REDIRECT_URI }));
  const resource = options.resource === undefined ? `${ctx.base}/mcp` : options.resource;
  if (resource !== null) url.searchParams.set('resource', resource);
  const answer = await ctx.browser.consent(url.toString(), 'approve', options.siteIds ?? [ctx.tenant.siteId]);
  const code = answer.location ? new URL(answer.location).searchParams.get('code') : null;
  if (!code) throw new Error(`no code: ${answer.status} ${answer.location} ${answer.text.slice(0, 300)}`);
  const tokens = await tokenRequest(ctx.base, { grant_type: 'authorization_code', client_id: client.clientId, code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
  if (tokens.status !== 200) throw new Error(`token request failed: ${JSON.stringify(tokens.json)}`);
  return tokens.json.access_token as string;
}

/** The JSON a tool answered (its text content), with isError. */
export function toolAnswer(result: unknown): { isError: boolean; body: Record<string, any> } {
  const r = result as CallToolResult;
  const text = r.content.find((c) => c.type === 'text');
  return { isError: r.isError === true, body: JSON.parse(text && text.type === 'text' ? text.text : 'null') };
}

/** A raw JSON-RPC POST to /mcp (for status codes and headers the SDK client hides). */
export function rawMcp(mcpUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

export const callTool = (name: string, args: Record<string, unknown>, id = 2) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
