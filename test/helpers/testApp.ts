import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { app } from '../../src/app.ts';
import { serverOptions } from '../../src/http/serverOptions.ts';
import { createApiKey, createSite, createTeam, changeSiteSettings } from '../../src/commands/tenancy.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import type { Plan } from '../../src/domain/site.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { createServices, type Services } from '../../src/services.ts';
import { type RunningProjections, startProjections } from '../../src/projections/startProjections.ts';
import type { AgentWorkWiring } from '../../src/agentWorkWiring.ts';

export interface TestApp {
  fastify: FastifyInstance;
  services: Services;
  config: Config;
  dataDir: string;
  /** Base URL when started with `listen: true`. */
  url: string;
  /** The projection thread and how to stop it (`projectionsInThread`), else null (in-process runner). */
  projections: RunningProjections | null;
  close(): Promise<void>;
}

/** A settable clock for tests that cross days, minutes or expiry times. */
export class TestClock implements Clock {
  constructor(public current = new Date('2026-01-15T12:00:00.000Z')) {}
  now() {
    return new Date(this.current);
  }
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/**
 * The real service on a temporary data directory: SQLite event store and read models, projections
 * running, the fastify app registered. `listen: true` also binds a loopback port (port 0).
 */
export async function startTestApp(
  options: { env?: Record<string, string>; clock?: Clock; listen?: boolean; dataDir?: string; projectionsInThread?: boolean; agentWork?: AgentWorkWiring } = {},
): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'outreach-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', ...options.env });
  const services = await createServices(config, { clock: options.clock, agentWork: options.agentWork });
  // In-process by default (as before); `projectionsInThread` runs them as `npm start` does.
  const projections = options.projectionsInThread
    ? startProjections(services, (error) => console.error(error))
    : (services.projections.start(), null);
  const fastify = Fastify({ ...serverOptions(config), logger: false });
  await fastify.register(app, { services });
  let url = '';
  if (options.listen) url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  else await fastify.ready();
  return {
    fastify,
    services,
    config,
    dataDir,
    url,
    projections,
    async close() {
      await fastify.close();
      await projections?.stop();
      await services.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Tenant {
  teamId: string;
  ownerUserId: string;
  siteId: string;
  forwardingAddress: string;
  /** An API key with every scope, on every site of the team. */
  key: string;
  keyId: string;
}

/** A team with one site and an all-scopes key, visible in the read models when it returns. */
export async function createTenant(
  services: Services,
  options: { plan?: Plan; scopes?: Scope[]; email?: string; password?: string; sendingDomainVerified?: boolean; domain?: string } = {},
): Promise<Tenant> {
  const email = options.email ?? `owner-${services.newId().toLowerCase()}@example.test`;
  const team = await createTeam(services, { name: 'Team', ownerEmail: email, ownerPassword: options.password });
  const site = await createSite(services, { teamId: team.teamId, domain: options.domain ?? 'example.test', plan: options.plan ?? 'advanced' }, services.config.MAIL_DOMAIN);
  if (options.sendingDomainVerified) await changeSiteSettings(services, { siteId: site.siteId, changes: { sendingDomainVerified: true } });
  const scopes = options.scopes ?? ([
    'analytics:read', 'opportunities:read', 'articles:read', 'articles:write', 'agents:read',
    'agents:write', 'inbox:read', 'inbox:write', 'webhooks:read', 'webhooks:write',
  ] as Scope[]);
  const key = await createApiKey(services, { teamId: team.teamId, name: 'test', scopes, siteId: null });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  return { teamId: team.teamId, ownerUserId: team.ownerUserId, siteId: site.siteId, forwardingAddress: site.forwardingAddress, key: key.key, keyId: key.id };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
