/**
 * Mails per second through the forwarding mailbox (SMTP: smtp-server, mailparser on the parsing
 * threads, the IngestMessage command with extraction, one durable append each, projections in
 * their thread) against a bare smtp-server that reads each message to its end and answers 250,
 * both fed by the same nodemailer pool in the same run. Also the longest stall of the event loop the
 * API shares while the mailbox works: parsing runs on its own threads (SMTP_PARSE_THREADS).
 *
 * No issue sets a target for this figure: it is reported so that a change to the mailbox's path
 * shows (the ratio to the bare sink, which every machine's noise moves alike).
 */
import nodemailer from 'nodemailer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { changeSiteSettings, createSite, createTeam } from '../src/commands/tenancy.ts';
import { configureAgent } from '../src/commands/agents.ts';
import { loadConfig } from '../src/config.ts';
import { startForwardingMailbox } from '../src/processors/forwardingMailbox.ts';
import { startProjections } from '../src/projections/startProjections.ts';
import { createServices } from '../src/services.ts';
import { PITCH } from './ingestionBody.ts';
import type { BenchResult } from './types.ts';

const MAILS = Number(process.env.BENCH_MAILBOX_MAILS ?? 2_000);
const CONNECTIONS = 8;
const MAIL_DOMAIN = 'inbound.test';

/** Sends MAILS distinct mails through a pool of CONNECTIONS; each mail's time from send to 250. */
async function send(port: number, to: string, tag: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: CONNECTIONS, maxMessages: Infinity, logger: false });
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < MAILS) {
      const i = next++;
      const t0 = performance.now();
      try {
        await transport.sendMail({
          from: `"${PITCH.fromName}" <${PITCH.from}>`,
          to,
          subject: `${PITCH.subject} ${i}`,
          text: PITCH.bodyText,
          html: `<p>${PITCH.bodyText.replaceAll('\n', '</p><p>')}</p>`,
          messageId: `<${tag}-${i}@prospect.io>`,
        });
        latencies.push(performance.now() - t0);
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS * 2 }, lane));
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  latencies.sort((a, b) => a - b);
  const p = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1));
  return { rate: latencies.length / seconds, p50: p(0.5), p99: p(0.99), failed };
}

async function bareSink() {
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => callback(null));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export default async function run(): Promise<BenchResult> {
  const bare = await bareSink();
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', MAIL_DOMAIN, PROJECTIONS_IN_THREAD: 'true' });
  const services = await createServices(config);
  const projections = startProjections(services, (error) => console.error(error));
  try {
    const team = await createTeam(services, { name: 'Bench', ownerEmail: 'bench@example.test' });
    const site = await createSite(services, { teamId: team.teamId, domain: 'example.test', plan: 'advanced' }, MAIL_DOMAIN);
    await changeSiteSettings(services, { siteId: site.siteId, changes: { dailyIngestionCap: 1_000_000_000, dailyExtractionCap: 1_000_000_000 } });
    await configureAgent(services, { siteId: site.siteId, agentKey: 'outreach', changes: { active: true } });
    await services.projections.waitFor(await services.events.headPosition(), 10_000);
    const mailbox = await startForwardingMailbox(services, { host: '127.0.0.1', port: 0, mailDomain: MAIL_DOMAIN, maxMessageBytes: 10 * 1024 * 1024, onError: (error) => console.error(error) });
    const to = site.forwardingAddress;
    try {
      // Warm-up (JIT, the parsing threads, SQLite's page cache), not measured.
      await send(bare.port, to, 'warm-bare');
      await send(mailbox.port, to, 'warm');
      const bareRun = await send(bare.port, to, 'bare');
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const mailboxRun = await send(mailbox.port, to, 'run');
      delay.disable();
      await services.projections.waitFor(await services.events.headPosition(), 30_000);
      const ingested = (await services.events.readAll({ types: ['MessageIngested'], limit: 1_000_000 })).length;
      const ratio = mailboxRun.rate / bareRun.rate;
      return {
        name: 'forwarding mailbox vs bare SMTP sink',
        figures: {
          mails: MAILS,
          connections: CONNECTIONS,
          'bare sink mails/s': Math.round(bareRun.rate),
          'bare sink p99 ms': bareRun.p99,
          'mailbox mails/s': Math.round(mailboxRun.rate),
          'mailbox p50 ms': mailboxRun.p50,
          'mailbox p99 ms': mailboxRun.p99,
          'bare sink refused or failed': bareRun.failed,
          'mailbox refused or failed': mailboxRun.failed,
          'ingested (warm-up and run)': ingested,
          'longest event-loop stall during the mailbox run, ms': Math.round(delay.max / 1e6),
        },
        ratio,
        ratioLabel: 'mailbox mails/s ÷ bare sink mails/s',
        target: 'none set (reported); every mail taken and ingested',
        // No target for the rate: the run fails only when the mailbox lost or refused mail.
        pass: mailboxRun.failed === 0 && ingested === 2 * MAILS,
      };
    } finally {
      await mailbox.close();
    }
  } finally {
    await bare.close();
    await projections.stop();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
