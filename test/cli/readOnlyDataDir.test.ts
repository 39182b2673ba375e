/**
 * The auditor's commands on a DATA_DIR they may not write to (a read-only mount, a copy kept for an
 * audit): `events read` and `events tail` read the log as it is, and nothing in the directory is
 * created or changed. Before, they stopped with "DATA_DIR … cannot be used".
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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

/** A DATA_DIR with a history of one team, made read-only; `open` keeps its services open (a live writer). */
async function readOnlyDataDir(t: Test, open: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-cli-ro-'));
  t.teardown(() => {
    chmodSync(dataDir, 0o700);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const s = await createServices(loadConfig({ DATA_DIR: dataDir }));
  const { teamId } = await createTeam(s, { name: 'Acme', ownerEmail: 'owner@acme.test' });
  const last = await s.events.headPosition();
  if (open) t.teardown(() => s.close());
  else await s.close();
  for (const f of readdirSync(dataDir)) chmodSync(join(dataDir, f), 0o444);
  chmodSync(dataDir, 0o555);
  // The copy a clean stop needs goes to a temporary directory of the test's own, checked after.
  const tmp = mkdtempSync(join(tmpdir(), 'outreach-cli-ro-tmp-'));
  chmodSync(tmp, 0o777);
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const as = { ...user, cwd: tmp };
  const listing = () => readdirSync(dataDir).map((f) => `${f} ${statSync(join(dataDir, f)).size} ${statSync(join(dataDir, f)).mtimeMs}`).sort();
  return { dataDir, teamId, last, tmp, as, listing, env: { DATA_DIR: dataDir, TMPDIR: tmp } };
}

for (const open of [false, true]) {
  t.test(`events read and tail on a read-only DATA_DIR (${open ? 'a service still writing it: its WAL and shared-memory files are there' : 'after a clean stop: no WAL'})`, async (t) => {
    const d = await readOnlyDataDir(t, open);
    if (!open) t.same(readdirSync(d.dataDir).filter((f) => f.startsWith('events.sqlite-')), [], 'precondition: no WAL left by the clean stop');
    const before = d.listing();
    const read = await outreach(['--json', 'events', 'read', `team-${d.teamId}`], d.env, d.as);
    t.equal(read.code, 0, read.stderr);
    t.match(read.lines<EventLine>()[0], { type: 'TeamCreated', stream: `team-${d.teamId}` });
    const tail = await outreach(['--json', 'events', 'tail', '--no-follow'], d.env, d.as);
    t.equal(tail.code, 0, tail.stderr);
    t.equal(tail.lines<EventLine>().at(-1)?.position, d.last.toString(), 'the whole log, to its last event');
    t.same(d.listing(), before, 'nothing in DATA_DIR created or changed');
    t.same(readdirSync(d.tmp).filter((f) => f.startsWith('outreach-events-')), [], 'no copy left behind');
  });
}
