#!/usr/bin/env node
/**
 * Summarises a `node --cpu-prof` profile: the functions with the most self time, and the inclusive
 * share of chosen functions (a sample counts once for a name however often the name is on its stack).
 *
 *   node scripts/cpuProfileSummary.mjs <file.cpuprofile> [--top 30] [--inclusive name1,~labelPart,...] [--callers functionName]
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args[0];
if (!file) {
  console.error('usage: cpuProfileSummary.mjs <file.cpuprofile> [--top N] [--inclusive a,b,c]');
  process.exit(2);
}
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const top = Number(opt('--top', '30'));
const inclusive = (opt('--inclusive', '') || '').split(',').filter(Boolean);
const callersOf = opt('--callers', '');

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const url = f.url ? f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/') : '';
  return `${f.functionName || '(anonymous)'} ${url}${url ? `:${f.lineNumber + 1}` : ''}`;
};

const deltas = profile.timeDeltas;
const self = new Map();
const incl = new Map(inclusive.map((n) => [n, 0]));
let total = 0;
const callers = new Map();
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000; // ms attributed to this sample
  const node = byId.get(profile.samples[i]);
  total += dt;
  if (node.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  const key = label(node);
  self.set(key, (self.get(key) ?? 0) + dt);
  if (callersOf && node.callFrame.functionName === callersOf) {
    const chain = [];
    for (let id = parent.get(node.id); id !== undefined && chain.length < 4; id = parent.get(id)) chain.push(byId.get(id).callFrame.functionName || '(anon)');
    const key = chain.join(' < ');
    callers.set(key, (callers.get(key) ?? 0) + dt);
  }
  if (inclusive.length) {
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const name = byId.get(id).callFrame.functionName;
      for (const want of inclusive) if (!seen.has(want) && (want.startsWith('~') ? label(byId.get(id)).includes(want.slice(1)) : name === want)) seen.add(want);
    }
    for (const want of seen) incl.set(want, incl.get(want) + dt);
  }
}
const busy = total - idle;
const pct = (ms) => `${((ms / busy) * 100).toFixed(1)}%`;
console.log(`profile ${file}: ${(total / 1000).toFixed(2)} s sampled, ${(busy / 1000).toFixed(2)} s busy (shares below are of busy time)`);
console.log(`\nself time, top ${top}:`);
for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(ms).padStart(6)}  ${ms.toFixed(0).padStart(6)} ms  ${k}`);
if (inclusive.length) {
  console.log('\ninclusive (function on the stack):');
  for (const [k, ms] of incl) console.log(`  ${pct(ms).padStart(6)}  ${ms.toFixed(0).padStart(6)} ms  ${k}`);
}
if (callersOf) {
  console.log(`\ncallers of ${callersOf} (self time, 4 frames up):`);
  for (const [k, ms] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(ms).padStart(6)}  ${ms.toFixed(0).padStart(6)} ms  ${k}`);
}
