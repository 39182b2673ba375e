/**
 * Shared by bench/agentThroughput.bench.ts and bench/agentLatency.bench.ts: the real service in a
 * temporary DATA_DIR (SQLite event store with durable commits, projections running, limits raised)
 * with one agent-ready site (outreach agent active, auto-reply on, sending domain verified), the
 * REST app registered on fastify, and the pitch bodies the load sends.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { app } from '../src/app.ts';
import { configureAgent } from '../src/commands/agents.ts';
import { changeSiteSettings, createApiKey, createSite, createTeam } from '../src/commands/tenancy.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { TemplateDrafter } from '../src/adapters/drafting/templateDrafter.ts';
import { OutboxMailer } from '../src/adapters/mail/outboxMailer.ts';
import type { OutgoingMail } from '../src/ports/mailer.ts';
import type { RecordedEvent } from '../src/ports/eventStore.ts';
import { type Services, createServices } from '../src/services.ts';

export interface AgentBenchService {
  dir: string;
  config: Config;
  services: Services;
  fastify: FastifyInstance;
  siteId: string;
  key: string;
  /** Path of the site's inbox ingestion endpoint. */
  inboxPath: string;
}

export async function startAgentBenchService(prefix: string, env: Record<string, string> = {}): Promise<AgentBenchService> {
  const dir = mkdtempSync(join(process.env.BENCH_AGENT_DIR ?? tmpdir(), prefix));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', PORT: '0', WRITE_RATE_LIMIT_PER_MINUTE: '1000000000', RUN_AGENT: 'false', ...env });
  const services = await createServices(config);
  services.projections.start();
  const team = await createTeam(services, { name: 'Bench', ownerEmail: 'bench@example.test' });
  const site = await createSite(services, { teamId: team.teamId, domain: 'example.test', plan: 'advanced' }, config.MAIL_DOMAIN);
  await changeSiteSettings(services, { siteId: site.siteId, changes: { dailyIngestionCap: 1_000_000_000, dailyExtractionCap: 1_000_000_000, sendingDomainVerified: true } });
  await configureAgent(services, { siteId: site.siteId, agentKey: 'outreach', changes: { active: true, autoReply: true } });
  const key = await createApiKey(services, { teamId: team.teamId, name: 'bench', scopes: ['inbox:write'], siteId: null });
  await services.projections.waitFor(await services.events.headPosition(), 10_000);
  const fastify = Fastify({ logger: false });
  await fastify.register(app, { services });
  await fastify.ready();
  return { dir, config, services, fastify, siteId: site.siteId, key: key.key, inboxPath: `/api/v1/sites/${site.siteId}/outreach/inbox/messages` };
}

/** The i-th pitch: the same text for all, its own sender and Message-Id, so each opens its own conversation. */
export function pitch(i: number) {
  return {
    from: `jane${i}@prospect.io`,
    fromName: 'Jane Prospect',
    subject: 'Quick link suggestion for your SEO article',
    bodyText: [
      'Hi there,',
      'I loved your article https://example.test/blog/seo-tips and noticed it has no section on schema markup.',
      'Would you consider adding a link to our guide https://prospect.io/schema-guide with the anchor text "schema markup guide"?',
      'Suggested sentence: "For the details, see this schema markup guide."',
      'Thanks, Jane',
    ].join('\n'),
    messageId: `<pitch-${i}@prospect.io>`,
    runExtraction: true,
  };
}

/** The mail the agent sent for a `ReplyDrafted` event, as it handed it to the mail port. */
export function mailOfDraft(recorded: RecordedEvent): OutgoingMail {
  const d = recorded.data as {
    rfcMessageId: string;
    from: OutgoingMail['from'];
    to: OutgoingMail['to'];
    subject: string;
    bodyText: string;
    inReplyTo: string | null;
    references: string[];
    returnPath: string | null;
  };
  return { messageId: d.rfcMessageId, from: d.from, to: d.to, subject: d.subject, text: d.bodyText, inReplyTo: d.inReplyTo, references: d.references, returnPath: d.returnPath };
}

/**
 * The reply the agent writes to pitch i (template drafter, default settings, the ask the offline
 * extractor finds), before the agent has run: the baseline's mails ahead of the agent round.
 */
export async function expectedReply(i: number): Promise<OutgoingMail> {
  const p = pitch(i);
  const ask = {
    targetUrl: 'https://prospect.io/schema-guide',
    anchorText: 'schema markup guide',
    suggestedSentence: 'For the details, see this schema markup guide.',
    sourceUrl: 'https://example.test/blog/seo-tips',
  };
  const draft = await new TemplateDrafter().draft({
    outcome: 'accept',
    subject: p.subject,
    bodyText: p.bodyText,
    from: p.from,
    fromName: p.fromName,
    asks: [ask],
    siteDomain: 'example.test',
    settings: { senderName: null, signature: null, tone: 'friendly' },
  });
  return {
    messageId: `<reply.expected${i}@example.test>`,
    from: { name: 'example.test', address: 'outreach@example.test' },
    to: { name: p.fromName, address: p.from },
    subject: draft.subject,
    text: draft.text,
    inReplyTo: p.messageId,
    references: [p.messageId],
    returnPath: 'inbox+0123456789abcdef0123456789abcdef@mail.example.test',
  };
}

export function percentile(sorted: number[], p: number): number {
  const v = sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return v === undefined ? NaN : Math.round(v * 10) / 10;
}

export const cpuMicros = (u: NodeJS.CpuUsage) => u.user + u.system;

/** The baseline: bare `OutboxMailer.send` of `mails` into a fresh outbox file `file`, `inFlight` at a time. */
export async function bareSends(file: string, mails: OutgoingMail[], inFlight: number): Promise<{ rate: number; cpuUs: number }> {
  const outbox = new OutboxMailer(file);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let k = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (k < mails.length) await outbox.send(mails[k++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = cpuMicros(process.cpuUsage(cpu));
  await outbox.close();
  return { rate: mails.length / seconds, cpuUs };
}

/** N pitches through the REST route (32 in flight), the agent stopped; the dispatches they left in the log. */
export async function ingestPitches(s: AgentBenchService, n: number): Promise<{ seconds: number; failed: number; head: bigint; dispatches: number }> {
  const auth = { authorization: `Bearer ${s.key}` };
  const started = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) {
        const i = next++;
        const res = await s.fastify.inject({ method: 'POST', url: s.inboxPath, headers: auth, payload: pitch(i) });
        if (res.statusCode !== 201) failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const head = await s.services.events.headPosition();
  await s.services.projections.waitFor(head, 60_000);
  const dispatches = (await s.services.events.readAll({ limit: 10_000_000 })).filter((e) => e.type === 'AgentDispatchRequested').length;
  return { seconds, failed, head, dispatches };
}
