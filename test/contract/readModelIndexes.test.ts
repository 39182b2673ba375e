import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import { chooseIndex } from '../../src/adapters/shared/pageShape.ts';
import type { PageQuery, ReadModelStore } from '../../src/ports/readModelStore.ts';
import { type ConversationFilters, listConversationsPage } from '../../src/readModels/conversations.ts';
import { READ_MODEL_INDEXES } from '../../src/readModels/indexes.ts';
import { listMessagesOfConversation } from '../../src/readModels/messages.ts';
import { type OpportunityFilters, listOpportunitiesPage } from '../../src/readModels/opportunities.ts';
import { listSuppressionsPage } from '../../src/readModels/suppressions.ts';
import { type AgentRunFilters, agentRunsInStatus, listAgentRunsPage } from '../../src/readModels/agentRuns.ts';
import { listArticlesPage } from '../../src/readModels/articles.ts';

/** A store that records the page queries the read-model functions issue and answers nothing. */
function recorder() {
  const pages: Array<{ collection: string; query: PageQuery }> = [];
  const store = {
    page: async (collection: string, query: PageQuery) => {
      pages.push({ collection, query });
      return [];
    },
    get: async () => null,
  } as unknown as ReadModelStore;
  return { store, pages };
}

const AFTER = { value: '2026-01-01T00:00:00.000Z', id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
const T = '2026-01-01T00:00:00.000Z';

/** Every filter the list API offers, alone and together, with and without a cursor. */
async function apiQueries() {
  const { store, pages } = recorder();
  const conversationFilters: ConversationFilters[] = [
    {},
    { status: 'resolved' },
    { unread: true },
    { aiPaused: false },
    { contactEmail: 'jane@prospect.io' },
    { createdAfter: T, createdBefore: T },
    { updatedAfter: T, updatedBefore: T },
    { status: 'open', unread: true, aiPaused: true, contactEmail: 'jane@prospect.io', createdAfter: T, updatedBefore: T },
  ];
  const opportunityFilters: OpportunityFilters[] = [{}, { entrySource: 'forwarded_actionable' }, { stub: true }, { kind: 'interlinking' }, { createdAfter: T, createdBefore: T }, { entrySource: 'direct_inbound_external', stub: false }];
  const runFilters: AgentRunFilters[] = [{}, { agentKey: 'outreach' }, { status: 'running' }, { queuedAfter: T, queuedBefore: T }, { agentKey: 'outreach', status: 'failed' }];
  for (const after of [null, AFTER]) {
    for (const f of conversationFilters) await listConversationsPage(store, 'site', f, after, 25);
    for (const f of opportunityFilters) await listOpportunitiesPage(store, 'site', f, after, 25);
    await listSuppressionsPage(store, 'team', after, 25);
    for (const f of runFilters) await listAgentRunsPage(store, 'site', f, after, 25);
    for (const f of [{}, { changedAfter: T }]) await listArticlesPage(store, 'site', f, after, 25);
  }
  await agentRunsInStatus(store, 'running', 100);
  await listMessagesOfConversation(store, 'site', 'conversation');
  return pages;
}

t.test('every page the API asks for has a declared index that seeks its filter and yields its order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'readmodel-indexes-'));
  const store = new SqliteReadModelStore(join(dir, 'readmodels.sqlite'), READ_MODEL_INDEXES);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const queries = await apiQueries();
  t.equal(queries.length, 46, "every shape was recorded");
  for (const { collection, query } of queries) {
    const what = `${collection} ${JSON.stringify(query.filter)} ${JSON.stringify(query.ranges ?? {})}${query.after ? ' after a cursor' : ''}`;
    const index = chooseIndex(READ_MODEL_INDEXES, collection, query);
    t.ok(index, `${what}: an index`);
    const equality = Object.keys(query.filter).filter((f) => f !== 'siteId' && f !== 'teamId' && f !== 'conversationId');
    if (equality.length === 1) t.ok(index?.includes(equality[0]!), `${what}: the filter's own index`);
    const plan = store.explainPage(collection, query).join(' | ');
    t.match(plan, new RegExp(`USING INDEX rm_${collection}__${index!.join('__')}`), `${what}: SQLite walks it (${plan})`);
    t.notMatch(plan, /TEMP B-TREE/, `${what}: no sort`);
  }
});

t.test('opening a store creates the declared indexes and drops page indexes no longer declared', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'readmodel-indexes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'readmodels.sqlite');
  const old = new SqliteReadModelStore(file, { conversations: [['siteId', 'legacy', 'createdAt']] });
  await old.close();
  const store = new SqliteReadModelStore(file, READ_MODEL_INDEXES);
  const query: PageQuery = { filter: { siteId: 's', legacy: 'x' }, orderBy: 'createdAt', direction: 'desc', limit: 5 };
  t.notMatch(store.explainPage('conversations', query).join(' | '), /rm_conversations__siteId__legacy__createdAt/, 'the undeclared index is gone');
  t.match(store.explainPage('conversations', query).join(' | '), /rm_conversations__siteId__createdAt/, 'the declared one serves it');
  await store.close();
});

t.test('SQLite pages: cached documents while they are the committed version; parsed from the file once another process wrote', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'readmodel-indexes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'readmodels.sqlite');
  const here = new SqliteReadModelStore(file, READ_MODEL_INDEXES);
  const other = new SqliteReadModelStore(file, READ_MODEL_INDEXES);
  t.teardown(async () => {
    await here.close();
    await other.close();
  });
  const doc = (id: string, subject: string) => ({ id, siteId: 's', subject, createdAt: `2026-01-01T00:00:0${id}.000Z` });
  await here.applyBatch('p', 1, -1n, 1n, async (w) => {
    for (const id of ['1', '2', '3']) await w(1n).put('conversations', doc(id, `first ${id}`));
  });
  const query: PageQuery = { filter: { siteId: 's' }, orderBy: 'createdAt', direction: 'desc', limit: 10 };
  const first = await here.page<{ id: string; subject: string }>('conversations', query);
  t.same(first.map((d) => d.subject), ['first 3', 'first 2', 'first 1']);
  t.throws(() => {
    (first[0] as { subject: string }).subject = 'changed by the caller';
  }, TypeError, 'a page\'s documents are read-only (the cached objects, frozen)');
  t.equal((await here.page<{ id: string; subject: string }>('conversations', query))[0]!.subject, 'first 3', 'a caller trying to change a page changes nothing stored');

  // Another process rewrites one document and adds one; this store has not reloaded.
  await other.getCheckpoint('p');
  t.ok(await other.applyBatch('p', 1, 1n, 2n, async (w) => {
    await w(2n).put('conversations', doc('2', 'second 2'));
    await w(2n).put('conversations', doc('4', 'second 4'));
  }));
  t.same((await here.page<{ id: string; subject: string }>('conversations', query)).map((d) => d.subject), ['second 4', 'first 3', 'second 2', 'first 1'], 'the committed versions');
});
