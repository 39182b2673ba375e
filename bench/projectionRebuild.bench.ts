/**
 * Projection rebuild, events per second: a full rebuild of every registered projection through
 * ProjectionRunner into a fresh SqliteReadModelStore, against a raw `SELECT` + `JSON.parse` of the
 * same rows from the same events file, in the same run.
 *
 * The history is made by the real deciders (teams with users and billing changes, sites with
 * settings changes, API keys used and revoked, webhook subscriptions created and deleted) and
 * appended through the SqliteEventStore port; see `buildHistory` for the mix.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AesSecretBox } from '../src/adapters/crypto/aesSecretBox.ts';
import { SqliteEventStore } from '../src/adapters/sqlite/sqliteEventStore.ts';
import { SqliteReadModelStore } from '../src/adapters/sqlite/sqliteReadModelStore.ts';
import { apiKeyDecider, apiKeyStream } from '../src/domain/apiKey.ts';
import type { Decider } from '../src/domain/decider.ts';
import { siteDecider, siteStream } from '../src/domain/site.ts';
import { teamDecider, teamStream } from '../src/domain/team.ts';
import { subscriptionStream, webhookSubscriptionDecider } from '../src/domain/webhookSubscription.ts';
import type { NewEvent } from '../src/ports/eventStore.ts';
import { allProjections } from '../src/projections/index.ts';
import { ProjectionRunner } from '../src/projections/projectionRunner.ts';
import { API_KEYS } from '../src/readModels/apiKeys.ts';
import { SITES } from '../src/readModels/sites.ts';
import { TEAMS as TEAMS_COLLECTION } from '../src/readModels/teams.ts';
import { USERS } from '../src/readModels/users.ts';
import { WEBHOOK_SUBSCRIPTIONS } from '../src/readModels/webhookSubscriptions.ts';
import { profileWindow } from './profileWindow.ts';
import type { BenchResult } from './types.ts';

const TEAMS = Number(process.env.BENCH_TEAMS ?? 2_000);
const ROUNDS = 3;

/** Folds commands through a decider the way handleCommand does, collecting the events. */
function streamOf<S, C, E extends { type: string; data: unknown }>(decider: Decider<S, C, E>, commands: C[]): NewEvent[] {
  let state = decider.initialState();
  const out: NewEvent[] = [];
  for (const command of commands) {
    for (const event of decider.decide(command, state)) {
      state = decider.evolve(state, event);
      out.push({ type: event.type, data: event.data });
    }
  }
  return out;
}

const id = (kind: string, n: number) => `01J${kind.toUpperCase().padEnd(5, 'X')}${String(n).padStart(18, '0')}`;
const at = (n: number) => new Date(1_750_000_000_000 + n * 1_000).toISOString();
const FAKE_SCRYPT = 'scrypt$16384$8$1$' + 'a'.repeat(22) + '$' + 'b'.repeat(43);

/**
 * Per team (39 events): team created + owner, one more user, a billing change; 3 sites each with
 * 2 settings changes; 2 API keys each used 5 times, one revoked; 3 subscriptions per site, one
 * of them deleted again.
 */
export function teamHistory(t: number, box: AesSecretBox): Array<[string, NewEvent[]]> {
  const teamId = id('team', t);
  const streams: Array<[string, NewEvent[]]> = [];
  streams.push([
    teamStream(teamId),
    streamOf(teamDecider, [
      { type: 'CreateTeam', data: { teamId, name: `Team ${t}`, owner: { userId: id('user', t * 2), email: `owner${t}@example.com`, passwordHash: FAKE_SCRYPT }, now: at(t) } },
      { type: 'AddUser', data: { teamId, userId: id('user', t * 2 + 1), email: `member${t}@example.com`, role: 'member', passwordHash: null, now: at(t + 1) } },
      { type: 'SetTeamBillingStatus', data: { teamId, billingStatus: 'past_due', now: at(t + 2) } },
    ]),
  ]);
  for (let s = 0; s < 3; s++) {
    const siteId = id('site', t * 3 + s);
    streams.push([
      siteStream(siteId),
      streamOf(siteDecider, [
        { type: 'CreateSite', data: { siteId, teamId, domain: `site${t}-${s}.example.com`, plan: 'pro', forwardingToken: randomBytes(12).toString('hex'), now: at(t) } },
        { type: 'ChangeSiteSettings', data: { siteId, changes: { sendingDomainVerified: true }, now: at(t + 3) } },
        { type: 'ChangeSiteSettings', data: { siteId, changes: { aiCredits: 100 + s, plan: 'advanced' }, now: at(t + 4) } },
      ]),
    ]);
    for (let w = 0; w < 3; w++) {
      const subscriptionId = id('sub', (t * 3 + s) * 3 + w);
      const secret = `svc_wh_${randomBytes(32).toString('base64url')}`;
      streams.push([
        subscriptionStream(subscriptionId),
        streamOf(webhookSubscriptionDecider, [
          {
            type: 'CreateSubscription',
            data: {
              subscriptionId, teamId, siteId, label: `Hook ${w}`, url: `https://hooks.example.com/${t}/${s}/${w}`,
              eventTypes: ['outreach.message_received', 'outreach.opportunity_created'],
              secretPrefix: `${secret.slice(0, 11)}…`, sealedSecret: box.seal(secret), createdByOauthClientId: null, now: at(t + 5),
            },
          },
          ...(w === 0 ? [{ type: 'DeleteSubscription' as const, data: { subscriptionId, siteId, now: at(t + 6) } }] : []),
        ]),
      ]);
    }
  }
  for (let k = 0; k < 2; k++) {
    const apiKeyId = id('key', t * 2 + k);
    streams.push([
      apiKeyStream(apiKeyId),
      streamOf(apiKeyDecider, [
        { type: 'CreateApiKey', data: { apiKeyId, teamId, name: `Key ${k}`, scopes: ['webhooks:read', 'webhooks:write'], siteId: null, keyHash: randomBytes(32).toString('hex'), now: at(t) } },
        ...Array.from({ length: 5 }, (_, u) => ({ type: 'RecordApiKeyUse' as const, data: { apiKeyId, now: at(t + 100 * (u + 1)) } })),
        ...(k === 1 ? [{ type: 'RevokeApiKey' as const, data: { apiKeyId, now: at(t + 1_000) } }] : []),
      ]),
    ]);
  }
  return streams;
}

export async function buildHistory(file: string): Promise<void> {
  const store = new SqliteEventStore(file);
  const box = new AesSecretBox(randomBytes(32));
  try {
    for (let t = 0; t < TEAMS; t += 50) {
      const appends: Promise<unknown>[] = [];
      for (let u = t; u < Math.min(t + 50, TEAMS); u++) {
        for (const [stream, events] of teamHistory(u, box)) appends.push(store.append(stream, events, 'no_stream'));
      }
      await Promise.all(appends);
    }
  } finally {
    await store.close();
  }
}

/** Baseline: every row of the same file, in position order, with its JSON parsed. */
function rawRead(file: string): { events: number; ms: number } {
  const db = new Database(file, { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    const started = performance.now();
    let events = 0;
    for (const row of db.prepare<[], { data: string; metadata: string }>('SELECT * FROM events ORDER BY position').iterate()) {
      JSON.parse(row.data);
      JSON.parse(row.metadata);
      events++;
    }
    return { events, ms: performance.now() - started };
  } finally {
    db.close();
  }
}

export async function rebuild(eventsFile: string, readModelFile: string, profileName?: string): Promise<{ ms: number; documents: number }> {
  const events = new SqliteEventStore(eventsFile);
  const readModels = new SqliteReadModelStore(readModelFile);
  try {
    const runner = new ProjectionRunner(events, readModels, allProjections);
    await runner.init();
    const stopProfile = profileName ? await profileWindow(profileName) : async () => {};
    const started = performance.now();
    await runner.catchUp();
    const ms = performance.now() - started;
    await stopProfile();
    const head = await events.headPosition();
    if (runner.position !== head) throw new Error(`rebuild stopped at ${runner.position}, head ${head}`);
    let documents = 0;
    for (const c of [TEAMS_COLLECTION, USERS, SITES, API_KEYS, WEBHOOK_SUBSCRIPTIONS]) documents += (await readModels.find(c, {})).length;
    return { ms, documents };
  } finally {
    await readModels.close();
    await events.close();
  }
}

/** `outreach projections rebuild <name>` on a store already built: one projection, the events of its types only. */
async function rebuildOne(eventsFile: string, readModelFile: string, name: string): Promise<{ ms: number; events: number }> {
  const events = new SqliteEventStore(eventsFile);
  const readModels = new SqliteReadModelStore(readModelFile);
  try {
    const runner = new ProjectionRunner(events, readModels, allProjections);
    await runner.init();
    const started = performance.now();
    const report = await runner.rebuild([name]);
    return { ms: performance.now() - started, events: report.events };
  } finally {
    await readModels.close();
    await events.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'outreach-bench-proj-'));
  const eventsFile = join(dir, 'events.sqlite');
  try {
    const buildStarted = performance.now();
    await buildHistory(eventsFile);
    const buildMs = performance.now() - buildStarted;
    const total = rawRead(eventsFile).events; // also warms the page cache and the JIT for both sides
    const raw: number[] = [];
    const port: number[] = [];
    let documents = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const r = rawRead(eventsFile);
      raw.push(r.events / (r.ms / 1000));
      const p = await rebuild(eventsFile, join(dir, `readmodels-${round}.sqlite`), `projectionRebuild-round${round}`);
      port.push(total / (p.ms / 1000));
      documents = p.documents;
    }
    const one = await rebuildOne(eventsFile, join(dir, `readmodels-${ROUNDS - 1}.sqlite`), 'webhookSubscriptions');
    const rawRate = median(raw);
    const rebuildRate = median(port);
    const ratio = rebuildRate / rawRate;
    return {
      name: 'projection rebuild: events/s',
      figures: {
        'events in history': total,
        'history build through the port (s)': (buildMs / 1000).toFixed(1),
        'projections': allProjections.map((p) => p.name).join(', '),
        'read-model documents after rebuild': documents,
        'raw SELECT + JSON.parse (events/s)': Math.round(rawRate),
        'ProjectionRunner + SqliteReadModelStore rebuild (events/s)': Math.round(rebuildRate),
        'rebuild time (s)': (total / rebuildRate).toFixed(2),
        'rounds (median of)': ROUNDS,
        'one projection rebuilt (webhookSubscriptions): events of its types': one.events,
        'one projection rebuilt (webhookSubscriptions): time (s)': (one.ms / 1000).toFixed(2),
      },
      ratio,
      ratioLabel: 'rebuild / raw SELECT + JSON.parse',
      target: '≥ 50% of raw',
      pass: ratio >= 0.5,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
