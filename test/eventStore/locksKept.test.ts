import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

/**
 * The service keeps the POSIX locks of its SQLite connections: each file is opened by SQLite only
 * once it exists (closing any other descriptor of a file drops every lock the process holds on it).
 * Without them an analyst's `sqlite3` shell reading a live file checkpoints and deletes the WAL
 * when it closes, and what the service writes after that is seen by no other process.
 */
const FILES = ['events.sqlite', 'readmodels.sqlite', 'counters.sqlite'];

/** The locks /proc/locks lists for this process on the file (Linux). */
function locksHeld(file: string): number {
  const inode = statSync(file).ino;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((line) => line.includes(`:${inode} `) && line.split(/\s+/).includes(String(process.pid))).length;
}

t.test('every SQLite file of the service is locked by it while it runs', { skip: existsSync('/proc/locks') ? false : 'no /proc/locks here' }, async (t) => {
  // Projections in their own thread, as `npm start` runs them: a second connection to each file.
  const app = await startTestApp({ projectionsInThread: true });
  t.teardown(() => app.close());
  // A write to each file: the event log, its projections, and the counters (the write tier's limit).
  const tenant = await createTenant(app.services);
  const res = await app.fastify.inject({ method: 'POST', url: `/api/v1/sites/${tenant.siteId}/outreach/suppressions`, headers: bearer(tenant.key), payload: { email: 'someone@example.com' } });
  t.equal(res.statusCode, 201, res.body);
  for (const file of FILES) t.ok(locksHeld(join(app.dataDir, file)) > 0, `${file} is locked by the service`);
});

t.test("a sqlite3 shell reading the live event log leaves the service's WAL in place", { skip: spawnSync('sqlite3', ['-version']).status === 0 ? false : 'no sqlite3 shell on PATH' }, async (t) => {
  // Projections in their own thread, as `npm start` runs them: a second connection to each file.
  const app = await startTestApp({ projectionsInThread: true });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const file = join(app.dataDir, 'events.sqlite');
  const count = () => Number(spawnSync('sqlite3', [file, 'select count(*) from events'], { encoding: 'utf8' }).stdout.trim());
  const before = count();
  t.ok(before > 0, 'the shell reads the live log');
  t.ok(existsSync(`${file}-wal`), 'the WAL is still there after the shell closed');
  const res = await app.fastify.inject({ method: 'POST', url: `/api/v1/sites/${tenant.siteId}/outreach/suppressions`, headers: bearer(tenant.key), payload: { email: 'someone@example.com' } });
  t.equal(res.statusCode, 201, res.body);
  t.ok(count() > before, 'another process sees what the service wrote after it');
});
