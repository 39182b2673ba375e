import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/adapters/sqlite/openDatabase.ts';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from './helpers.ts';

/** SQLITE_BUSY as better-sqlite3 raises it: a file whose write lock another connection holds. */
function lockedFileError(t: Test): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'locked-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const holder = openDatabase(join(dir, 'x.sqlite'), 'FULL');
  holder.exec('CREATE TABLE x (v)');
  holder.exec('BEGIN IMMEDIATE');
  const waiter = new Database(join(dir, 'x.sqlite'), { timeout: 0 });
  try {
    waiter.exec('INSERT INTO x VALUES (1)');
  } catch (error) {
    return error;
  } finally {
    waiter.close();
    holder.close();
  }
  throw new Error('expected SQLITE_BUSY');
}

t.test('an MCP tool meeting an unavailable store answers SERVICE_UNAVAILABLE with retryAfterSeconds, as REST answers 503', async (t) => {
  const ctx = await startMcpApp();
  t.teardown(() => ctx.app.close());
  const token = await obtainToken(ctx, { scope: 'opportunities:read', siteIds: [ctx.tenant.siteId] });
  const client = await connectWithToken(ctx.mcpUrl, token);
  t.teardown(() => client.close());
  const busy = lockedFileError(t);
  const store = ctx.app.services.readModels as ReadModelStore & Record<string, unknown>;
  const page = store.page.bind(store);
  store.page = (async () => {
    throw busy;
  }) as typeof store.page;
  const refused = toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: ctx.tenant.siteId } }));
  t.equal(refused.isError, true);
  t.equal(refused.body.error?.code, 'SERVICE_UNAVAILABLE');
  t.equal((refused.body.error as { retryAfterSeconds?: number }).retryAfterSeconds, 1);
  store.page = page;
  t.equal(toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: ctx.tenant.siteId } })).isError, false, 'the store back: answered');
});
