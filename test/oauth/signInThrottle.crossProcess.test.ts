import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { findUserByEmail } from '../../src/readModels/users.ts';
import { startTestApp } from '../helpers/testApp.ts';
import { Browser, PASSWORD, addTeamUser, startOAuthApp } from './helpers.ts';

/**
 * The sign-in throttle lives in the shared counter store: failures on one service instance count on
 * another (two instances on one data directory, each with its own connection to counters.sqlite).
 */
t.test('failed sign-ins on two instances add up to one lock-out', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-throttle-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { app: a, ownerEmail } = await startOAuthApp({ dataDir });
  t.teardown(() => a.close());
  const b = await startTestApp({ listen: true, dataDir });
  t.teardown(() => b.close());
  (b.services.config as { PUBLIC_BASE_URL: string }).PUBLIC_BASE_URL = b.url;
  const victim = await addTeamUser(a, (await findUserByEmail(a.services.readModels, ownerEmail))!.teamId, 'admin');
  await b.services.projections.waitFor(await b.services.events.headPosition(), 5_000);

  const onA = new Browser(a.url);
  const onB = new Browser(b.url);
  for (let i = 0; i < 3; i++) t.equal((await onA.signIn(victim, `guess-a${i}`)).status, 401, `failure ${i + 1} on A`);
  for (let i = 0; i < 2; i++) t.equal((await onB.signIn(victim, `guess-b${i}`)).status, 401, `failure ${i + 4} on B`);
  const lockedB = await onB.signIn(victim, PASSWORD);
  t.equal(lockedB.status, 429, 'B refuses the right password after five failures across both');
  t.ok(Number(lockedB.headers.get('retry-after')) > 0);
  t.equal((await onA.signIn(victim, PASSWORD)).status, 429, 'and so does A');
});
