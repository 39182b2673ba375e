import { z } from 'zod';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseAllowedRanges } from './domain/destination.ts';
import { hasDomainLabels } from './domain/domainName.ts';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** `ip`, `ip:port` or `[ipv6]:port`, the forms node's Resolver#setServers accepts. */
const isDnsServer = (v: string) => {
  const m = /^\[(.+)\](?::(\d{1,5}))?$/.exec(v) ?? (isIP(v) ? [v, v] : /^([^:]+):(\d{1,5})$/.exec(v));
  return Boolean(m && isIP(m[1]!) && (m[2] === undefined || (Number(m[2]) >= 1 && Number(m[2]) <= 65535)));
};

/**
 * A PEM file of CA certificates, read at start: a missing, unreadable or certificate-less file stops
 * the start naming the variable (the role that uses it, in the background thread, would only crash
 * and restart, delivering nothing, while /readyz said ready).
 */
const caFile = z
  .string()
  .min(1)
  .superRefine((path, ctx) => {
    try {
      const blocks = readFileSync(path, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
      if (blocks.length === 0) throw new Error('no PEM certificate in it');
      for (const block of blocks) new X509Certificate(block);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `must be a readable PEM file of CA certificates: ${(error as Error).message}` });
    }
  });

/**
 * Whom to believe in X-Forwarded-For (fastify's `trustProxy`): `false`; the reverse proxies'
 * addresses or CIDR ranges, comma-separated (`loopback` for one on the same host), so the client is
 * the first address they did not add; or `true`, every hop, which lets a client name its own address
 * unless the proxy replaces the header. (A hop count is not offered: fastify trusts no hop for it.)
 */
const trustProxy = z
  .string()
  .trim()
  .transform((v, ctx): boolean | string[] => {
    if (v === 'false' || v === '0') return false;
    if (v === 'true' || v === '1') return true;
    const parts = v.split(',').map((p) => p.trim());
    if (parts.every(isProxyAddress)) return parts;
    ctx.addIssue({ code: 'custom', message: 'must be false, true, or a comma-separated list of proxy addresses or CIDR ranges (loopback, linklocal and uniquelocal name those ranges)' });
    return z.NEVER;
  });
function isProxyAddress(p: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(p) || isIP(p) > 0) return true;
  const [address, bits, extra] = p.split('/');
  const family = isIP(address ?? '');
  return family > 0 && extra === undefined && /^\d{1,3}$/.test(bits ?? '') && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * The options of @eventstore/db-client's connection string, by their case- and `_`/`-`-insensitive
 * key. Checked here because its own parser prints the whole string, password included, on an
 * unknown key, and throws a stack for a bad value.
 */
const ESDB_OPTIONS: Record<string, 'integer' | 'true or false' | 'text' | 'leader, follower, readOnlyReplica or random'> = {
  usercertfile: 'text',
  userkeyfile: 'text',
  maxdiscoverattempts: 'integer',
  connectionname: 'text',
  defaultdeadline: 'integer',
  discoveryinterval: 'integer',
  gossiptimeout: 'integer',
  nodepreference: 'leader, follower, readOnlyReplica or random',
  tls: 'true or false',
  tlsverifycert: 'true or false',
  tlscafile: 'text',
  throwonappendfailure: 'true or false',
  keepaliveinterval: 'integer',
  keepalivetimeout: 'integer',
  dnsdiscover: 'true or false',
};
const flat = (v: string) => v.trim().toLowerCase().replace(/[_-]/g, '');
const eventStoreUrl = z
  .string()
  .regex(/^esdb(\+discover)?:\/\//, 'must be an esdb:// or esdb+discover:// connection string (the client knows no other scheme)')
  .superRefine((url, ctx) => {
    const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
    for (const pair of query.split('&').filter(Boolean)) {
      const [key = '', value = ''] = pair.split('=');
      const expected = ESDB_OPTIONS[flat(key)];
      const bad = (why: string) => ctx.addIssue({ code: 'custom', message: why });
      if (!expected) bad(`unknown option "${key.slice(0, 40)}" (known: ${Object.keys(ESDB_OPTIONS).join(', ')}, any case)`);
      else if (expected === 'integer' && !/^-?\d+$/.test(value)) bad(`option ${key} must be an integer`);
      else if (expected === 'true or false' && value !== 'true' && value !== 'false') bad(`option ${key} must be true or false`);
      // The client knows this one in exactly this spelling; any other it prints with the whole string, password included.
      else if (flat(key) === 'dnsdiscover' && key !== 'dnsDiscover') bad(`option ${key.slice(0, 40)} must be written dnsDiscover`);
      // The service needs a refused append to throw; the client would report it as a success.
      else if (flat(key) === 'throwonappendfailure' && value === 'false') bad(`option ${key}=false is not supported: a conflicting append must fail`);
      // The client warns with the whole string, password included, and ignores it.
      else if (flat(key) === 'tlsverifycert' && value === 'false') bad(`option ${key}=false is not supported by the EventStoreDB client (it has no effect); trust the server's CA with tlsCAFile instead`);
      else if (expected.startsWith('leader') && !['leader', 'follower', 'readonlyreplica', 'random'].includes(flat(value))) bad(`option ${key} must be ${expected}`);
    }
  });

/** The service's own address as clients reach it: http(s), a host, an optional path; no credentials, query or fragment. */
const publicBaseUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).refine((v) => {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return true; // z.url reports it (zod runs a refinement after a failed check too: one line per variable)
  }
  return url.hostname !== '' && url.username === '' && url.password === '' && !/[?#]/.test(v);
}, 'must be an http(s) address with a host and no credentials, query or fragment');

/** `scheme://host[:port]` exactly as a browser sends it in an Origin header. */
function isOrigin(value: string): boolean {
  try {
    return /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;
  } catch {
    return false;
  }
}

const cidrList = z.string().refine((v) => {
  try {
    parseAllowedRanges(v);
    return true;
  } catch {
    return false;
  }
}, 'must be a comma-separated list of CIDR ranges');

/** Every setting the service reads, from environment variables. The README's table mirrors this. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_BASE_URL: publicBaseUrl.optional(),
  // Browser origins allowed to call /mcp besides the service's own and loopback ones (src/mcp/origin.ts); `*` allows any.
  MCP_ALLOWED_ORIGINS: z
    .string()
    .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
    .refine((origins) => origins.every((o) => o === '*' || isOrigin(o)), 'must be a comma-separated list of origins (https://host[:port], no path) or *')
    .default([]),
  MAIL_DOMAIN: z
    .string()
    .transform((v) => v.replace(/\.$/, '')) // a fully qualified name's trailing dot, as `site create --domain` drops it
    .pipe(z.string().refine((v) => hasDomainLabels(v.toLowerCase()), 'must be a domain name'))
    .default('inbound.localhost'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EVENTSTORE_URL: eventStoreUrl.optional(),
  MONGODB_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// connection string').optional(),
  // MongoDB refuses these in a database name only at the first command, after a start that seemed fine.
  MONGODB_DB: z
    .string()
    .regex(/^[^/\\. "$*<>:|?\0]{1,63}$/, 'must be a MongoDB database name: 1 to 63 characters, none of / \\ . space " $ * < > : | ?')
    .default('outreach'),
  SECRET_KEY: z
    .string()
    // Buffer.from skips characters outside the alphabet, so junk was taken; quotes around the key
    // (`--env-file` keeps them) and spaces in it decode alike and stay allowed.
    .refine((v) => /^[A-Za-z0-9+/_-]{43}=?$/.test(v.replace(/\s+/g, '').replace(/^(['"])(.*)\1$/, '$2')) && Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded (base64 or base64url characters only)')
    .optional(),
  // false: start even when the key cannot open the sealed webhook secrets (a key lost for good; see README).
  SECRET_KEY_CHECK: bool.default(true),
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  RUN_PROJECTIONS: bool.default(true),
  // With the embedded SQLite stores, run the projections in their own thread of the process (src/projections/projectionThread.ts).
  PROJECTIONS_IN_THREAD: bool.default(true),
  // With the projection thread, run the webhook delivery worker and the Outreach Agent in one thread of their own (src/processors/backgroundThread.ts).
  WORKERS_IN_THREAD: bool.default(true),
  // Credentials in force at once: before a bearer credential is trusted the read models reach the store's head, bounded (then 503).
  CREDENTIAL_CATCH_UP_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  // Operations (the README's operations section).
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  READY_MAX_LAG_EVENTS: z.coerce.number().int().min(0).default(10_000),
  READY_MAX_STALL_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  TRUST_PROXY: trustProxy.default(false),
  // Slow and numerous clients (the README's table): every connection is bounded in time, and the process in connections.
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  WEBHOOK_ALLOWED_RANGES: cidrList.optional(),
  // MCP clients without a person in the dashboard (docs/mcp.md has the table).
  OAUTH_CLIENT_METADATA_ALLOWED_RANGES: cidrList.optional(),
  OAUTH_CLIENT_METADATA_EXTRA_CA_FILE: caFile.optional(),
  OAUTH_CLIENT_METADATA_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  OAUTH_DYNAMIC_REGISTRATION: bool.default(false),
  OAUTH_DYNAMIC_REGISTRATION_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(20),
  // Webhook delivery engine (docs/webhooks.md has the table).
  RUN_WEBHOOKS: bool.default(true),
  WEBHOOK_EXTRA_CA_FILE: caFile.optional(),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(10_000),
  WEBHOOK_MAX_RETRIES: z.coerce.number().int().min(0).max(3).default(3),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(0).max(86_400_000).default(10_000),
  WEBHOOK_RETRY_FACTOR: z.coerce.number().min(1).max(100).default(6),
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(1).default(0.2),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(256),
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: z.coerce.number().int().min(1).max(1_000).default(16),
  WEBHOOK_CONCURRENCY_PER_TEAM: z.coerce.number().int().min(1).max(10_000).default(64),
  WEBHOOK_CONNECTIONS_PER_DESTINATION: z.coerce.number().int().min(1).max(1_000).default(16),
  /** One site's articles: every body is held by the read models (in memory on the embedded store), so one client must not grow them without bound. */
  SITE_MAX_ARTICLES: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  SITE_MAX_ARTICLE_BYTES: z.coerce.number().int().min(1).max(1_000_000_000_000).default(50 * 1024 * 1024),
  WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE: z.coerce.number().int().min(1).max(10_000).default(25),
  WEBHOOK_WORKER_ID: z.string().min(1).max(200).optional(),
  WEBHOOK_ORPHAN_AFTER_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  WEBHOOK_RECORD_BATCH_MS: z.coerce.number().int().min(0).max(1_000).default(5),
  // Inbox ingestion (docs/ingestion.md has the table).
  WRITE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  INGESTION_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(10 * 1024 * 1024).default(256 * 1024),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  // The Outreach Agent (docs/agent.md has the table).
  RUN_AGENT: bool.default(true),
  AGENT_WORKER_ID: z.string().min(1).max(200).optional(),
  AGENT_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  AGENT_FROM_LOCAL_PART: z
    .string()
    .regex(/^(?=.{1,64}$)[a-z0-9_+-]+(?:\.[a-z0-9_+-]+)*$/i, 'must be an email local part (letters, digits, _ + - and single dots inside)')
    .default('outreach'),
  AGENT_SEND_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(4),
  AGENT_RETRY_BASE_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  AGENT_RETRY_FACTOR: z.coerce.number().min(1).max(100).default(5),
  // A worker sends a claimed attempt only within half of this after its claim (else another may have
  // recovered it): 0 stopped every reply, each refused as "the event store failed for too long".
  AGENT_ORPHAN_AFTER_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
  // Agent runs (docs/agents.md has the table).
  RUN_AGENT_RUNNER: bool.default(true),
  AGENT_RUNNER_WORKER_ID: z.string().min(1).max(200).optional(),
  AGENT_RUN_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(2),
  AGENT_RUN_LEASE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  AGENT_RUN_MAX_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(900_000),
  AGENT_RUNS_PER_HOUR: z.coerce.number().int().min(1).max(1_000).default(5),
  AGENT_SCHEDULE_INTERVAL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  AI_CREDITS_ENFORCED: bool.default(false),
  // Failed dashboard sign-ins from one client address within 15 minutes, whatever the email (429 beyond).
  SIGN_IN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(30),
  // Failed dashboard sign-ins to one account within 15 minutes, whatever the client address (429 beyond).
  SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(50),
  // Dashboard sign-ins waiting for a password check (two run at once); more are answered 429 at once.
  SIGN_IN_MAX_QUEUED_CHECKS: z.coerce.number().int().min(0).max(100_000).default(32),
  SMTP_ENABLED: bool.default(false),
  SMTP_HOST: z.string().min(1).default('0.0.0.0'),
  SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525),
  SMTP_MAX_MESSAGE_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  // What one sender may hold of the mailbox every tenant shares (src/processors/smtpLimits.ts).
  SMTP_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(100),
  SMTP_MAX_CLIENTS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(10),
  SMTP_SOCKET_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  SMTP_MAX_RECIPIENTS: z.coerce.number().int().min(1).max(1_000).default(50),
  // Received mail is parsed on these threads, each mail within this budget (554 beyond): the parsers' cost can grow faster than their input.
  SMTP_PARSE_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  SMTP_PARSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  // Sending-domain verification looks its TXT record up here (unset: the system's resolvers).
  DNS_SERVERS: z
    .string()
    .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
    .refine((servers) => servers.length > 0 && servers.every(isDnsServer), 'must be a comma-separated list of ip or ip:port ([ipv6]:port), port 1 to 65535')
    .optional(),
  // Outbound mail (the agent's replies); the SMTP_* settings above are the inbound forwarding mailbox.
  OUTBOUND_SMTP_URL: z
    .string()
    .refine((v) => {
      try {
        const url = new URL(v);
        // Port 0 would be dropped by the mailer, which then dials its default (587) instead.
        return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '' && url.port !== '0';
      } catch {
        return false;
      }
    }, 'must be an smtp:// or smtps:// URL with a host (and a port from 1 to 65535)')
    .optional(),
});

export type Config = z.infer<typeof configSchema> & { PUBLIC_BASE_URL: string };

export class ConfigError extends Error {}

/** A number as written in base 10 (`z.coerce.number()` alone also takes `0x10`, `1e3` and `0b11`). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** The variables whose schema is a number (under its default or optional). */
const numericVariables = new Set(
  Object.entries(configSchema.shape)
    .filter(([, schema]) => {
      let inner: z.ZodType = schema;
      while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
      return inner instanceof z.ZodNumber;
    })
    .map(([name]) => name),
);

/** Validates the environment; the error names every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty or blank is unset (`PORT=' '` was coerced to port 0, a blank retry count to 0 retries).
  const input = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const notDecimal = Object.keys(input).filter((name) => numericVariables.has(name) && !DECIMAL.test(input[name]!.trim()));
  const parsed = configSchema.safeParse(input);
  if (!parsed.success || notDecimal.length > 0) {
    const lines = notDecimal.map((name) => `  ${name}: must be a number in decimal digits`);
    for (const i of parsed.error?.issues ?? []) if (!notDecimal.includes(String(i.path[0]))) lines.push(`  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  // Node refuses a header timeout longer than the request timeout: the default follows a shorter request timeout, a value given is refused.
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    if (input['HTTP_HEADERS_TIMEOUT_MS'] !== undefined) {
      throw new ConfigError(`Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must be at most HTTP_REQUEST_TIMEOUT_MS (${config.HTTP_REQUEST_TIMEOUT_MS}); node refuses a longer one`);
    }
    config.HTTP_HEADERS_TIMEOUT_MS = config.HTTP_REQUEST_TIMEOUT_MS;
  }
  // A delivery attempt may take WEBHOOK_TIMEOUT_MS: a shorter orphan bound lets another worker send it again while it is in flight.
  if (config.WEBHOOK_ORPHAN_AFTER_MS <= config.WEBHOOK_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration:\n  WEBHOOK_ORPHAN_AFTER_MS: must be longer than WEBHOOK_TIMEOUT_MS (${config.WEBHOOK_TIMEOUT_MS}); another worker would send a delivery again while its attempt is in flight`,
    );
  }
  return { ...config, PUBLIC_BASE_URL: (config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`).replace(/\/$/, '') };
}
