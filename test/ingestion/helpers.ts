import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { type SmtpLimits } from '../../src/processors/smtpLimits.ts';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { configureAgent } from '../../src/commands/agents.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import type { Services } from '../../src/services.ts';
import { bearer, createTenant, startTestApp, type Tenant } from '../helpers/testApp.ts';

export const PITCH = {
  from: 'jane@prospect.io',
  fromName: 'Jane Prospect',
  subject: 'Quick link suggestion for your SEO article',
  bodyText: [
    'Hi there,',
    'I loved your article https://example.test/blog/seo-tips and noticed it has no section on schema markup.',
    'Would you consider adding a link to our guide https://prospect.io/schema-guide with the anchor text "schema markup guide"?',
    'Suggested sentence: "For the details, see this schema markup guide."',
    'Thanks, Jane',
  ].join('\n'),
};

export const UNACTIONABLE = {
  from: 'sam@agency.io',
  subject: 'Partnership?',
  bodyText: 'Hello, we are an agency and would love to collaborate with you some time. Are you open to a call next week?',
};

export function inboxUrl(siteId: string) {
  return `/api/v1/sites/${siteId}/outreach/inbox/messages`;
}

/** POSTs one ingestion through the real HTTP stack (inject). */
export function ingest(app: FastifyInstance, tenant: Pick<Tenant, 'siteId' | 'key'>, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: inboxUrl(tenant.siteId), headers: { ...bearer(tenant.key), ...headers }, payload: body as object });
}

/** A site where nothing pauses the agent: outreach agent active, auto-reply on, sending domain verified. */
export async function makeAgentReady(services: Services, siteId: string) {
  await configureAgent(services, { siteId, agentKey: 'outreach', changes: { active: true, autoReply: true } });
  await changeSiteSettings(services, { siteId, changes: { sendingDomainVerified: true } });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
}

/** Every event of the global log (small test stores). */
export async function allEvents(services: Services) {
  return services.events.readAll({ limit: 100_000 });
}

export async function eventsOfType(services: Services, type: string) {
  return (await allEvents(services)).filter((e) => e.type === type);
}

/** The service (MAIL_DOMAIN inbound.test) with one tenant and the forwarding mailbox on a free port, closed at the test's end. */
export async function startMailboxApp(
  t: Test,
  options: { limits?: Partial<SmtpLimits>; maxMessageBytes?: number; parseThreads?: number; parseTimeoutMs?: number } = {},
) {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const { maxMessageBytes = 1024 * 1024, ...rest } = options;
  const mailbox = await startForwardingMailbox(app.services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes, ...rest });
  t.teardown(() => mailbox.close());
  return { app, tenant, mailbox };
}
