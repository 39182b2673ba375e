import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { credentialCatchUp } from '../../src/http/credentialsInForce.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { CREDENTIAL_MARK, CREDENTIAL_PROJECTIONS, credentialEventTypes } from '../../src/projections/credentialProjections.ts';
import { allProjections } from '../../src/projections/index.ts';

/**
 * The credential mark: authenticated requests wait for the credential projections to pass the last
 * credential event, not the head, so an ingestion load (events authentication never reads) does not
 * hold them up, while a credential change from any connection or process still does.
 */
const dir = mkdtempSync(join(tmpdir(), 'credential-mark-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const types = credentialEventTypes(allProjections);
const marks = { [CREDENTIAL_MARK]: types ?? [] };
const unrelated = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'MessageReceived', data: { i } }));
const credential = (type: string) => [{ type, data: {} }];

t.test('the credential projections list their event types', async (t) => {
  t.ok(types, 'every credential projection lists what it handles');
  for (const type of ['ApiKeyCreated', 'ApiKeyRevoked', 'TeamCreated', 'SiteCreated', 'SiteSettingsChanged', 'TokenRevoked', 'OAuthClientDeleted']) {
    t.ok(types!.includes(type), type);
  }
  t.notOk(types!.includes('MessageReceived'));
});

t.test('the mark follows credential events only, whoever appends them', async (t) => {
  const file = join(dir, 'mark.sqlite');
  const store = new SqliteEventStore(file, { marks });
  t.teardown(() => store.close());
  t.equal(await store.markPosition(CREDENTIAL_MARK), -1n, 'empty store');
  t.equal(await store.markPosition('other'), null, 'a mark not kept');

  const created = await store.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  t.equal(await store.markPosition(CREDENTIAL_MARK), created.position);
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(`conversation-${i}`, unrelated(3), 'any')));
  t.ok((await store.headPosition()) > created.position + 50n, 'the head moved on');
  t.equal(await store.markPosition(CREDENTIAL_MARK), created.position, 'unrelated events do not move the mark');

  // Another connection that knows nothing of marks (another process, an older CLI): the trigger in the file keeps it.
  const plain = new SqliteEventStore(file);
  const revoked = await plain.append('apiKey-1', credential('ApiKeyRevoked'), 0n);
  await plain.close();
  t.equal(await store.markPosition(CREDENTIAL_MARK), revoked.position, 'an append from a connection opened without marks');

  // The writer thread's connection, through a background role's view.
  const background = store.offThreadAppends();
  const [site] = await Promise.all([background.append('site-1', credential('SiteCreated'), 'no_stream'), background.append('conversation-x', unrelated(2), 'any')]);
  t.ok((await store.markPosition(CREDENTIAL_MARK))! >= site!.position, 'an append committed on the writer thread');
});

t.test('a mark installed on a store with history starts at the head', async (t) => {
  const file = join(dir, 'history.sqlite');
  const before = new SqliteEventStore(file);
  await before.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  const last = await before.append('conversation-1', unrelated(5), 'no_stream');
  await before.close();
  const store = new SqliteEventStore(file, { marks });
  t.teardown(() => store.close());
  t.equal(await store.markPosition(CREDENTIAL_MARK), last.position);
});

t.test('the mark matches whole type names only', async (t) => {
  const store = new SqliteEventStore(join(dir, 'names.sqlite'), { marks });
  t.teardown(() => store.close());
  const created = await store.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  // Two names that are neighbours in the sorted list, joined as the trigger's list joins them.
  const sorted = [...types!].sort();
  const joined = `${sorted[0]},${sorted[1]}`;
  for (const type of ['ApiKey', 'KeyCreated', 'ApiKeyCreatedX', joined, `,${sorted[0]}`, `${sorted[0]},`, 'apikeycreated', '']) {
    await store.append(`other-${type}`, [{ type, data: {} }], 'any');
  }
  t.equal(await store.markPosition(CREDENTIAL_MARK), created.position, 'no part of a listed name, no list of them, moves it');
  const team = await store.append('team-1', credential('TeamCreated'), 'no_stream');
  t.equal(await store.markPosition(CREDENTIAL_MARK), team.position, 'the first listed name');
  const user = await store.append('user-1', credential('UserAdded'), 'no_stream');
  t.equal(await store.markPosition(CREDENTIAL_MARK), user.position, 'the last listed name');
  t.throws(() => new SqliteEventStore(join(dir, 'bad-type.sqlite'), { marks: { m: ["It's"] } }), /invalid event type/);
});

t.test('a file whose mark trigger an older version wrote gets the current one, and its mark keeps its place', async (t) => {
  const file = join(dir, 'older.sqlite');
  const older = new SqliteEventStore(file, { marks });
  const created = await older.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  const head = (await older.append('conversation-0', unrelated(3), 'no_stream')).position;
  // The trigger as versions up to 2026-11-25 wrote it.
  const quoted = [...types!].sort().map((type) => `'${type}'`).join(', ');
  const db = new Database(file);
  db.exec('DROP TRIGGER event_mark_credentials');
  db.exec(`CREATE TRIGGER event_mark_credentials AFTER INSERT ON events WHEN NEW.type IN (${quoted}) BEGIN UPDATE event_marks SET position = NEW.position WHERE name = 'credentials'; END`);
  db.close();
  await older.close();

  const store = new SqliteEventStore(file, { marks });
  t.teardown(() => store.close());
  const look = <T>(read: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  const sql = () => look((db) => db.prepare("SELECT sql FROM sqlite_master WHERE name = 'event_mark_credentials'").pluck().get() as string);
  t.match(sql(), /WHEN instr\(/, 'replaced');
  const mark = (await store.markPosition(CREDENTIAL_MARK))!;
  t.equal(mark, created.position, 'the mark stays where the old trigger kept it (not moved to the head)');
  t.ok(head > created.position);
  await store.append('conversation-1', unrelated(2), 'no_stream');
  const revoked = await store.append('apiKey-1', credential('ApiKeyRevoked'), 0n);
  t.equal(await store.markPosition(CREDENTIAL_MARK), revoked.position, 'and follows credential events');
  const schemaVersion = () => look((db) => db.pragma('schema_version', { simple: true }));
  const before = schemaVersion();
  const again = new SqliteEventStore(file, { marks });
  await again.close();
  t.equal(schemaVersion(), before, 'left as is by the next start (no schema change)');
});

t.test('a file whose mark has no trigger (dropped by hand) gets it back, and the mark goes to the head', async (t) => {
  const file = join(dir, 'no-trigger.sqlite');
  const older = new SqliteEventStore(file, { marks });
  await older.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  await older.close();
  const db = new Database(file);
  db.exec('DROP TRIGGER event_mark_credentials');
  db.close();
  const plain = new SqliteEventStore(file);
  const unseen = await plain.append('apiKey-1', credential('ApiKeyRevoked'), 0n);
  await plain.close();
  const store = new SqliteEventStore(file, { marks });
  t.teardown(() => store.close());
  t.equal(await store.markPosition(CREDENTIAL_MARK), unseen.position, 'a credential event appended without the trigger is not missed');
});

t.test('a request waits for the credential projections only up to the last credential event', async (t) => {
  const store = new SqliteEventStore(join(dir, 'catchup.sqlite'), { marks });
  t.teardown(() => store.close());
  const key = await store.append('apiKey-1', credential('ApiKeyCreated'), 'no_stream');
  // An ingestion load: the inbox (and every other) projection far behind the head.
  for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 20 }, (_, j) => store.append(`conversation-${i}-${j}`, unrelated(2), 'any')));

  const waits: bigint[] = [];
  const positions = new Map<string, bigint>(CREDENTIAL_PROJECTIONS.map((name) => [name, key.position]));
  positions.set('inbox', 0n);
  const projections = {
    positionOf: (names?: readonly string[]) => [...positions].filter(([n]) => !names || names.includes(n)).reduce((min, [, p]) => (p < min ? p : min), 1n << 62n),
    waitFor: async (position: bigint) => (waits.push(position), false),
  };
  const catchUp = credentialCatchUp({ events: store, projections }, 50);
  await catchUp();
  t.same(waits, [], 'caught up to the last credential event: no wait, with the inbox projection behind');

  const revoked = await store.append('apiKey-1', credential('ApiKeyRevoked'), 0n);
  await t.rejects(catchUp(), { code: 'SERVICE_UNAVAILABLE' }, 'a credential change not yet projected: refused, not trusted');
  t.same(waits, [revoked.position], 'waited for the revocation');

  // A store without marks (EventStoreDB): the head, as before.
  const headOnly = withoutMarks(store);
  await store.append('conversation-after', unrelated(3), 'no_stream');
  for (const name of CREDENTIAL_PROJECTIONS) positions.set(name, revoked.position);
  waits.length = 0;
  await catchUp();
  t.same(waits, [], 'with the mark: the revocation projected is enough');
  await t.rejects(credentialCatchUp({ events: headOnly, projections }, 50)());
  t.same(waits, [await store.headPosition()], 'without a mark the head is waited for');
});

/** The store's port without `markPosition`, as the EventStoreDB adapter offers it. */
function withoutMarks(store: SqliteEventStore): EventStore {
  return {
    append: (...a) => store.append(...a),
    readStream: (s) => store.readStream(s),
    readAll: (o) => store.readAll(o),
    subscribeToAll: (o) => store.subscribeToAll(o),
    waitForNew: (a, ms, s) => store.waitForNew(a, ms, s),
    headPosition: () => store.headPosition(),
    ping: () => store.ping(),
    close: async () => {},
  };
}
