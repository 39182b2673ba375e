/**
 * The auditor's commands on a DATA_DIR they may not write to (a read-only mount, a copy kept for an
 * audit): `events read` and `events tail` read the log as it is, and nothing in the directory is
 * created or changed. Before, they stopped with "DATA_DIR … cannot be used".
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createTeam } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { outreach, type EventLine } from '../helpers/cli.ts';

t.setTimeout(300_000);

// Root may write anywhere: the commands then run as nobody, which may not write to a root-owned 0555 directory.
const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
const bin = new URL('../../bin/outreach.js', import.meta.url).pathname;
if ('uid' in user && spawnSync(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(bin)}, require('fs').constants.R_OK)`], user).status !== 0) {
  t.plan(0, `nobody (uid 65534) cannot read ${bin}: these tests need a checkout other users may read when they run as root`);
  process.exit(0);
}

type Kind = 'clean stop' | 'live writer' | 'audit copy';
const TITLES: Record<Kind, string> = {
  'clean stop': 'after a clean stop: no WAL, read from a private copy',
  'live writer': 'a service still writing it: its WAL and shared-memory files are there, read in place',
  'audit copy': 'an audit copy of the log and its WAL without the shared-memory file, read from a private copy',
};

/** A DATA_DIR with a history of one team, made read-only as `kind` says. */
async function readOnlyDataDir(t: Test, kind: Kind) {
  const base = mkdtempSync(join(tmpdir(), 'outreach-cli-ro-'));
  chmodSync(base, 0o755); // the reader may look inside
  const live = join(base, 'live');
  const copy = join(base, 'copy');
  t.teardown(() => {
    for (const d of [live, copy]) if (existsSync(d)) chmodSync(d, 0o700);
    rmSync(base, { recursive: true, force: true });
  });
  const s = await createServices(loadConfig({ DATA_DIR: live }));
  const { teamId } = await createTeam(s, { name: 'Acme', ownerEmail: 'owner@acme.test' });
  const last = await s.events.headPosition();
  let dir = copy;
  if (kind === 'live writer') {
    // The service's own directory, still open, as a reader without write access to it sees it.
    t.teardown(() => s.close());
    for (const f of readdirSync(live)) chmodSync(join(live, f), 0o644);
    dir = live;
  } else {
    if (kind === 'clean stop') await s.close();
    mkdirSync(copy);
    for (const f of readdirSync(live)) {
      if (kind === 'audit copy' && (!f.startsWith('events.sqlite') || f.endsWith('-shm'))) continue;
      copyFileSync(join(live, f), join(copy, f));
      chmodSync(join(copy, f), 0o444);
    }
    if (kind === 'audit copy') await s.close();
  }
  chmodSync(dir, 0o555);
  // The copy a clean stop needs goes to a temporary directory of the test's own (sticky, as /tmp), checked after.
  const tmp = mkdtempSync(join(tmpdir(), 'outreach-cli-ro-tmp-'));
  chmodSync(tmp, 0o1777);
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const listing = () => readdirSync(dir).map((f) => `${f} ${statSync(join(dir, f)).size} ${statSync(join(dir, f)).mtimeMs}`).sort();
  return { dir, teamId, last, tmp, listing, as: { ...user, cwd: tmp }, env: { DATA_DIR: dir, TMPDIR: tmp } };
}

for (const kind of Object.keys(TITLES) as Kind[]) {
  t.test(`events read and tail on a read-only DATA_DIR (${TITLES[kind]})`, async (t) => {
    const d = await readOnlyDataDir(t, kind);
    if (kind === 'clean stop') t.same(readdirSync(d.dir).filter((f) => f.startsWith('events.sqlite-')), [], 'precondition: no WAL left by the clean stop');
    if (kind === 'audit copy') t.same(readdirSync(d.dir).sort(), ['events.sqlite', 'events.sqlite-wal'], 'precondition: the log and its WAL only');
    const before = d.listing();
    const read = await outreach(['--json', 'events', 'read', `team-${d.teamId}`], d.env, d.as);
    t.equal(read.code, 0, read.stderr);
    t.match(read.lines<EventLine>()[0], { type: 'TeamCreated', stream: `team-${d.teamId}` });
    const tail = await outreach(['--json', 'events', 'tail', '--no-follow'], d.env, d.as);
    t.equal(tail.code, 0, tail.stderr);
    t.equal(tail.lines<EventLine>().at(-1)?.position, d.last.toString(), 'the whole log, to its last event');
    if (kind !== 'live writer') {
      // Following a copy would show nothing the log gets later: it stops at the end, and says so.
      const followed = await outreach(['--json', 'events', 'tail'], d.env, d.as);
      t.equal(followed.code, 0, 'ended at the end of the copy');
      t.equal(followed.lines<EventLine>().at(-1)?.position, d.last.toString());
      t.match(followed.stderr, /read from a copy .* it stops at the end, as with --no-follow/);
    }
    t.same(d.listing(), before, 'nothing in DATA_DIR created or changed');
    t.same(readdirSync(d.tmp).filter((f) => f.startsWith('outreach-events-')), [], 'no copy left behind');
  });
}
