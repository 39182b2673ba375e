/**
 * A server process for bench/ingestion.bench.ts: `service` runs the real service (SQLite event store
 * with durable commits, projections, every hook) with limits raised, `bare` a fastify route that
 * parses and echoes the same JSON body. Prints one JSON line with what the load generator needs.
 */
import Fastify from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { app } from '../src/app.ts';
import { configureAgent } from '../src/commands/agents.ts';
import { changeSiteSettings, createApiKey, createSite, createTeam } from '../src/commands/tenancy.ts';
import { loadConfig } from '../src/config.ts';
import { createServices } from '../src/services.ts';
import { startProjections } from '../src/projections/startProjections.ts';
import { prefillEvents } from './prefillEvents.ts';

const mode = process.argv[2];
if (mode === 'bare') {
  const fastify = Fastify({ logger: false });
  fastify.post('/echo', async (request) => request.body);
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(JSON.stringify({ url: `${url}/echo` }) + '\n');
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    WRITE_RATE_LIMIT_PER_MINUTE: '1000000000',
    // As `npm start` runs them (default: their own thread); BENCH_PROJECTIONS_IN_THREAD=false for the in-process layout.
    PROJECTIONS_IN_THREAD: process.env.BENCH_PROJECTIONS_IN_THREAD ?? 'true',
  });
  const prefill = Number(process.env.BENCH_PREFILL_EVENTS ?? 0);
  if (prefill > 0) {
    // An event log that already holds other sites' ingestions (bench/ingestionGrowth.bench.ts). Their
    // read-model documents are not built: the projections' checkpoints are moved past them, so the
    // figure isolates the growth of the log (its B-trees and indexes) from a rebuild at start.
    prefillEvents(join(dataDir, 'events.sqlite'), prefill);
    const prepared = await createServices(config);
    const head = await prepared.events.headPosition();
    for (const p of prepared.projections.projections) await prepared.readModels.applyBatch(p.name, p.version, -1n, head, async () => {});
    await prepared.close();
  }
  const services = await createServices(config);
  startProjections(services, (error) => console.error(error));
  const team = await createTeam(services, { name: 'Bench', ownerEmail: 'bench@example.test' });
  const site = await createSite(services, { teamId: team.teamId, domain: 'example.test', plan: 'advanced' }, config.MAIL_DOMAIN);
  await changeSiteSettings(services, { siteId: site.siteId, changes: { dailyIngestionCap: 1_000_000_000, dailyExtractionCap: 1_000_000_000, sendingDomainVerified: true } });
  await configureAgent(services, { siteId: site.siteId, agentKey: 'outreach', changes: { active: true } });
  const key = await createApiKey(services, { teamId: team.teamId, name: 'bench', scopes: ['inbox:write'], siteId: null });
  await services.projections.waitFor(await services.events.headPosition(), 10_000);
  const fastify = Fastify({ logger: false });
  await fastify.register(app, { services });
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(JSON.stringify({ url: `${url}/api/v1/sites/${site.siteId}/outreach/inbox/messages`, key: key.key, dataDir }) + '\n');
}
process.once('SIGTERM', () => process.exit(0));

// bench/ingestionProfile.ts: SIGUSR2 starts the main thread's CPU profile, the next SIGUSR2 writes it to BENCH_PROFILE_FILE.
if (process.env.BENCH_PROFILE_FILE) {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  let running = false;
  let cpuAtStart = process.cpuUsage();
  process.on('SIGUSR2', () => {
    void (async () => {
      if (!running) {
        running = true;
        cpuAtStart = process.cpuUsage();
        await session.post('Profiler.start');
        process.stdout.write('profiling\n');
        return;
      }
      running = false;
      const { profile } = await session.post('Profiler.stop');
      // The whole process (every thread: event loop, event-store writer, projections), in µs.
      const cpu = process.cpuUsage(cpuAtStart);
      writeFileSync(process.env.BENCH_PROFILE_FILE!, JSON.stringify(profile));
      process.stdout.write(JSON.stringify({ processCpuUs: cpu.user + cpu.system }) + '\n');
    })();
  });
}
