/**
 * A server process for bench/conversationList.bench.ts. `service`: the real service (SQLite read
 * models with their declared indexes, every hook) with 100 000 conversations on one site, seeded
 * straight into the read model in one batch; prints the URLs of the first and a deep page and an
 * `inbox:read` key. `bare <file>`: a fastify route per page returning, from memory, the JSON the
 * service answered (read from `file`).
 */
import Fastify from 'fastify';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { app } from '../src/app.ts';
import { createApiKey, createSite, createTeam } from '../src/commands/tenancy.ts';
import { loadConfig } from '../src/config.ts';
import { encodeCursor } from '../src/http/pagination.ts';
import { CONVERSATIONS, type ConversationDoc } from '../src/readModels/conversations.ts';
import { createServices } from '../src/services.ts';

export const CONVERSATION_COUNT = Number(process.env.BENCH_CONVERSATIONS ?? 100_000);
/** How many conversations the deep page skips (newest first). */
export const DEEP_OFFSET = Math.floor(CONVERSATION_COUNT * 0.9);
export const PAGE_LIMIT = 25;

const BASE = Date.parse('2026-01-01T00:00:00.000Z');
const idOf = (i: number) => `01BENCH${String(i).padStart(19, '0')}`;
const createdAtOf = (i: number) => new Date(BASE + i * 1_000).toISOString();

const mode = process.argv[2];
if (mode === 'bare') {
  const bodies = JSON.parse(readFileSync(process.argv[3]!, 'utf8')) as { first: unknown; deep: unknown };
  const fastify = Fastify({ logger: false });
  fastify.get('/first', async () => bodies.first);
  fastify.get('/deep', async () => bodies.deep);
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(JSON.stringify({ first: `${url}/first`, deep: `${url}/deep` }) + '\n');
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' });
  const services = await createServices(config);
  services.projections.start();
  const team = await createTeam(services, { name: 'Bench', ownerEmail: 'bench@example.test' });
  const site = await createSite(services, { teamId: team.teamId, domain: 'example.test', plan: 'advanced' }, config.MAIL_DOMAIN);
  const key = await createApiKey(services, { teamId: team.teamId, name: 'bench', scopes: ['inbox:read'], siteId: null });
  await services.projections.waitFor(await services.events.headPosition(), 10_000);

  const seedStarted = performance.now();
  const statuses = ['open', 'open', 'open', 'resolved', 'declined', 'awaiting_human'] as const;
  await services.readModels.applyBatch('benchSeed', 1, -1n, 1n, async (writerAt) => {
    const w = writerAt(1n);
    for (let i = 0; i < CONVERSATION_COUNT; i++) {
      const at = createdAtOf(i);
      const doc: ConversationDoc = {
        id: idOf(i),
        siteId: site.siteId,
        teamId: team.teamId,
        opportunityId: `01BENCHOPP${String(i).padStart(16, '0')}`,
        entrySource: 'forwarded_actionable',
        status: statuses[i % statuses.length]!,
        contactEmail: `prospect${i}@example.com`,
        contactEmailKey: `prospect${i}@example.com`,
        contactName: `Prospect ${i}`,
        subject: `Quick link suggestion for your SEO article #${i}`,
        aiPaused: i % 4 === 0,
        skipReason: i % 4 === 0 ? 'agent_inactive' : null,
        messageCount: 1 + (i % 3),
        handledBy: 'agent',
        lastTriage: null,
        statusHistory: [],
        unread: i % 2 === 0,
        lastInboundMessageId: null,
        lastMessageAt: at,
        updatedAt: at,
        createdAt: at,
      };
      await w.put(CONVERSATIONS, doc);
    }
  });
  const seedMs = performance.now() - seedStarted;

  // The store alone, first and deep page alternating: the deep-page figure without HTTP noise.
  const before = CONVERSATION_COUNT - DEEP_OFFSET;
  const pageQuery = (after: { value: string; id: string } | null) => ({
    filter: { siteId: site.siteId },
    orderBy: 'createdAt',
    direction: 'desc' as const,
    after,
    limit: PAGE_LIMIT + 1,
  });
  // The second page (after the first 25) bounds the index walk as the deep one does; the first has no bound.
  const after = { first: null, second: { value: createdAtOf(CONVERSATION_COUNT - 1 - PAGE_LIMIT), id: idOf(CONVERSATION_COUNT - 1 - PAGE_LIMIT) }, deep: { value: createdAtOf(before), id: idOf(before) } };
  const kinds = ['first', 'second', 'deep'] as const;
  const storeMicros = { first: 0, second: 0, deep: 0 };
  const CALLS = 2_000;
  const WARM_UP = 100;
  for (let i = 0; i < CALLS + WARM_UP; i++) {
    for (const kind of kinds) {
      const started = performance.now();
      await services.readModels.page(CONVERSATIONS, pageQuery(after[kind]));
      if (i >= WARM_UP) storeMicros[kind] += (performance.now() - started) * 1000;
    }
  }
  // Tenths of a µs: a page takes a few µs, and whole µs would round a 6.4 against 6.5 into 6 against 7.
  const perCall = (total: number) => Math.round((total / CALLS) * 10) / 10;

  const fastify = Fastify({ logger: false });
  await fastify.register(app, { services });
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  const list = `${url}/api/v1/sites/${site.siteId}/outreach/conversations?limit=${PAGE_LIMIT}`;
  // The deep page's cursor, computed: the last item before it, newest first.
  const cursor = encodeCursor({ value: createdAtOf(before), id: idOf(before) });
  process.stdout.write(JSON.stringify({ first: list, deep: `${list}&cursor=${cursor}`, key: key.key, dataDir, seedMs: Math.round(seedMs), storeFirstUs: perCall(storeMicros.first), storeSecondUs: perCall(storeMicros.second), storeDeepUs: perCall(storeMicros.deep) }) + '\n');
}
process.once('SIGTERM', () => process.exit(0));
