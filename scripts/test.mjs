#!/usr/bin/env node
// `npm test`: runs tap with its raw TAP reporter, shows that output as it comes, and ends with
// one line `N passed, N failed` that the CI reads. Exits with tap's status.
//
// What is counted: leaf test points, as tap's own `# { total, pass, fail }` line does. A leaf is an
// assertion (an `ok` / `not ok` line that does not close a subtest) or a subtest that made no
// assertions of its own (a given/when/then test that throws on a mismatch). Skipped and todo
// points are counted apart and appear in neither number. A subtest that fails on its own account
// (a crash, a timeout, a plan mismatch) while none of its assertions failed counts as one failed
// point, so a broken test file can never read as green. If tap still exits non-zero with no
// failure found, the failure is counted as 1.
//
// Extra arguments are passed to tap: `npm test -- test/smoke.test.ts`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

// Never run inside itself (if tap were ever pointed at this file, it would recurse).
if (process.env.OUTREACH_TEST_RUNNER_ACTIVE) {
  process.stdout.write('# scripts/test.mjs: nested run refused\n');
  process.exit(0);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tapBin = join(root, 'node_modules', '.bin', 'tap');
if (!existsSync(tapBin)) {
  process.stdout.write('tap is not installed: run `npm install` first\n0 passed, 1 failed\n');
  process.exit(1);
}
const child = spawn(process.execPath, [tapBin, '--reporter=tap', ...process.argv.slice(2)], {
  cwd: root,
  env: { ...process.env, OUTREACH_TEST_RUNNER_ACTIVE: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});

const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
/** Open unbuffered subtests: the indent of their `# Subtest:` line and the counts before them. */
const open = [];
let yamlIndent = -1;

const points = () => counts.passed + counts.failed + counts.skipped + counts.todo;

const POINT = /^(\s*)(not ok|ok)\b(?:\s+\d+)?([^#]*)(#.*)?$/;

function onLine(line) {
  process.stdout.write(line + '\n');
  const indent = line.length - line.trimStart().length;
  const text = line.trim();
  if (yamlIndent >= 0) {
    // Inside the YAML diagnostics of the previous point: skip until its `...`.
    if (text === '...' && indent === yamlIndent) yamlIndent = -1;
    return;
  }
  if (text === '---') {
    yamlIndent = indent;
    return;
  }
  if (text.startsWith('# Subtest')) {
    open.push({ indent, failedBefore: counts.failed, pointsBefore: points() });
    return;
  }
  const m = POINT.exec(line);
  if (!m) return;
  const ok = m[2] === 'ok';
  const directive = (m[4] ?? '').toLowerCase();
  const top = open[open.length - 1];
  if (top && top.indent === indent) {
    open.pop();
    if (points() > top.pointsBefore) {
      // This point closes a subtest whose assertions are already counted.
      if (!ok && counts.failed === top.failedBefore) counts.failed += 1;
      return;
    }
    // A subtest without assertions of its own: it is the leaf; count it below.
  } else if ((m[4] ?? m[3]).trimEnd().endsWith('{')) {
    return; // buffered subtest header; its children follow
  }
  if (/^#\s*skip\b/.test(directive)) counts.skipped += 1;
  else if (/^#\s*todo\b/.test(directive)) counts.todo += 1;
  else if (ok) counts.passed += 1;
  else counts.failed += 1;
}

createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', onLine);

const status = await new Promise((resolve) => {
  child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});
if (status !== 0 && counts.failed === 0) {
  process.stdout.write(`# tap exited with status ${status} without a failing test point; counting it as one failure\n`);
  counts.failed = 1;
}
process.stdout.write(`# skipped: ${counts.skipped}, todo: ${counts.todo}\n`);
process.stdout.write(`${counts.passed} passed, ${counts.failed} failed\n`);
process.exit(status);
