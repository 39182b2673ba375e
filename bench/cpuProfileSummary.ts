/**
 * Groups a V8 CPU profile (`node --cpu-prof`, or the inspector's Profiler) of the ingestion server
 * by what the code does. Each sample is charged to the innermost frame on its stack that belongs
 * to a group ("self": built-ins such as JSON.stringify or a SQLite call count for the group that
 * called them), and to every group anywhere on its stack ("total").
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

type Matcher = (frame: CallFrame) => boolean;
const inFile = (part: string): Matcher => (f) => f.url.includes(part);
const named = (name: string, part: string): Matcher => (f) => f.functionName === name && f.url.includes(part);
const zodProvider = (from: number, to: number): Matcher => (f) => f.url.includes('fastify-type-provider-zod') && f.lineNumber >= from && f.lineNumber <= to;

/**
 * Frames of shared helpers (the event store's reads, the read-model store's get) belong to no group,
 * so their time goes to whoever called them: reading a stream to the ingestion's stream reads,
 * reading the log to the projections.
 */
export const GROUPS: Array<[string, Matcher[]]> = [
  ['counter store (SQLite upserts)', [inFile('sqliteCounterStore'), inFile('counterBatch'), inFile('sqliteLimits')]],
  ['write-rate tier', [inFile('http/writeRateLimit')]],
  ['authentication + site lookup', [inFile('http/authenticate'), inFile('http/credentials'), inFile('readModels/apiKeys'), inFile('readModels/sites'), inFile('credentialCache')]],
  ['idempotency (request hash, keyed stream)', [named('requestHash', 'commands/ingestion')]],
  ['stream reads (team, agents, suppressions)', [inFile('commands/aggregateStream'), inFile('lib/parseEvent')]],
  ['threading lookup', [inFile('readModels/messageThreads')]],
  ['extraction', [inFile('adapters/extractor')]],
  ['decide (domain)', [inFile('/src/domain/')]],
  ['append (event store, this thread)', [...['append', 'enqueue', 'flush', 'settle', ''].map((n) => named(n, 'sqliteEventStore')), inFile('appendWriter')]],
  ['projections (runner, handlers, read-model commits)', [inFile('/src/projections/'), named('applyBatch', 'sqliteReadModelStore'), named('', 'sqliteReadModelStore'), inFile('projectionThread')]],
  ['read-your-writes wait', [inFile('http/readYourWrites')]],
  ['ingestion command (rest)', [inFile('commands/ingestion')]],
  ['route handler', [inFile('http/routes/ingestion')]],
  ['request validation (zod)', [zodProvider(116, 122)]],
  ['response serialization (zod + JSON)', [zodProvider(133, 142)]],
  ['logging (pino)', [inFile('node_modules/pino')]],
  ['fastify, HTTP, sockets', [inFile('node_modules/fastify/'), inFile('find-my-way'), inFile('node:_http'), inFile('node:net'), inFile('node:internal/stream'), inFile('node:internal/http'), inFile('light-my-request'), inFile('node:_stream'), inFile('node:internal/streams')]],
  ['garbage collection', [(f) => f.functionName === '(garbage collector)']],
  ['idle', [(f) => f.functionName === '(idle)']],
];

export interface Summary {
  totalMs: number;
  busyMs: number;
  rows: Array<{ group: string; selfMs: number; totalMs: number }>;
  perRequestUs: number | null;
}

export function summarise(profile: CpuProfile, requests: number | null = null): Summary {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const groupOfFrame = new Map<number, number>();
  const frameGroup = (node: ProfileNode) => {
    let g = groupOfFrame.get(node.id);
    if (g === undefined) {
      g = GROUPS.findIndex(([, matchers]) => matchers.some((m) => m(node.callFrame)));
      groupOfFrame.set(node.id, g);
    }
    return g;
  };
  const self = new Array<number>(GROUPS.length + 1).fill(0);
  const total = new Array<number>(GROUPS.length + 1).fill(0);
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    all += dt;
    let selfGroup = -1;
    const seen = new Set<number>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const g = frameGroup(byId.get(n)!);
      if (g < 0) continue;
      if (selfGroup < 0) selfGroup = g;
      seen.add(g);
    }
    self[selfGroup < 0 ? GROUPS.length : selfGroup]! += dt;
    for (const g of seen) total[g]! += dt;
    if (seen.size === 0) total[GROUPS.length]! += dt;
  });
  const idle = GROUPS.findIndex(([name]) => name === 'idle');
  const busy = all - self[idle]!;
  const rows = [...GROUPS.map(([group], i) => ({ group, selfMs: self[i]!, totalMs: total[i]! })), { group: 'other (V8, node internals, modules)', selfMs: self[GROUPS.length]!, totalMs: total[GROUPS.length]! }];
  return { totalMs: all, busyMs: busy, rows, perRequestUs: requests ? (busy * 1000) / requests : null };
}

export function printSummary(s: Summary): void {
  const pct = (ms: number) => `${((100 * ms) / s.busyMs).toFixed(1)}%`;
  process.stdout.write(`profiled ${s.totalMs.toFixed(0)} ms, busy (not idle) ${s.busyMs.toFixed(0)} ms${s.perRequestUs ? `, ${s.perRequestUs.toFixed(0)} µs of main-thread CPU per ingestion` : ''}\n`);
  process.stdout.write('| where | self | total |\n|---|---|---|\n');
  for (const r of [...s.rows].sort((a, b) => b.selfMs - a.selfMs)) {
    if (r.group === 'idle' || r.totalMs < s.busyMs * 0.002) continue;
    process.stdout.write(`| ${r.group} | ${pct(r.selfMs)} | ${pct(r.totalMs)} |\n`);
  }
}
