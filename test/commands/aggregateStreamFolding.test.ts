import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { aggregateStream, aggregateStreamFolding } from '../../src/commands/aggregateStream.ts';
import { oauthGrantDecider, oauthGrantStream } from '../../src/domain/oauthGrant.ts';
import type { EventStore, ReadStreamOptions } from '../../src/ports/eventStore.ts';

/**
 * aggregateStreamFolding keeps a stream's last fold and reads only what was appended after it: an
 * OAuth grant's stream gains three events per refresh. Its answer is always aggregateStream's.
 */
const dir = mkdtempSync(join(tmpdir(), 'folding-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** The real store, counting the events each readStream returns. */
function counting(store: SqliteEventStore, options: { ignoreFrom?: boolean } = {}) {
  const reads: number[] = [];
  const events: EventStore = Object.create(store);
  events.readStream = async (streamId: string, read?: ReadStreamOptions) => {
    const out = await store.readStream(streamId, options.ignoreFrom ? undefined : read);
    reads.push(out.length);
    return out;
  };
  return { events, reads };
}

const consent = (grantId: string) => ({
  type: 'ConsentGiven',
  data: { grantId, clientId: 'C', teamId: 'T', userId: 'U', siteIds: ['S'], scopes: ['webhooks:read'], resource: null, givenAt: '2026-01-01T00:00:00.000Z' },
});
const issued = (grantId: string, i: number) => [
  { type: 'AccessTokenIssued', data: { grantId, clientId: 'C', issuedAt: '2026-01-01T00:00:00.000Z', tokenId: `A${i}`, tokenHash: `a${i}`, teamId: 'T', siteIds: ['S'], scopes: ['webhooks:read'], resource: null, expiresAt: '2026-01-01T01:00:00.000Z' } },
  { type: 'RefreshTokenIssued', data: { grantId, clientId: 'C', issuedAt: '2026-01-01T00:00:00.000Z', tokenId: `R${i}`, tokenHash: `r${i}`, scopes: ['webhooks:read'], expiresAt: '2026-02-01T00:00:00.000Z' } },
];

async function setUp() {
  const store = new SqliteEventStore(join(dir, `events-${(n += 1)}.sqlite`));
  const grantId = `G${n}`;
  const streamId = oauthGrantStream(grantId);
  await store.append(streamId, [consent(grantId), ...issued(grantId, 1)], 'no_stream');
  return { store, grantId, streamId };
}

const same = async (t: Test, store: EventStore, events: EventStore, streamId: string) => {
  const folded = await aggregateStreamFolding(events, streamId, oauthGrantDecider);
  const full = await aggregateStream(store, streamId, oauthGrantDecider);
  t.equal(folded.expectedRevision, full.expectedRevision);
  t.equal(folded.lastPosition, full.lastPosition);
  t.same(folded.state.status === 'none' ? [] : [...folded.state.refreshTokens], full.state.status === 'none' ? [] : [...full.state.refreshTokens], 'the same refresh tokens');
  t.same(folded.state.status === 'none' ? [] : [...folded.state.liveTokenIds.keys()], full.state.status === 'none' ? [] : [...full.state.liveTokenIds.keys()], 'the same live tokens');
  return folded;
};

t.test('a second read takes only what was appended since the first', async (t) => {
  const { store, grantId, streamId } = await setUp();
  t.teardown(() => store.close());
  const { events, reads } = counting(store);
  await same(t, store, events, streamId);
  t.same(reads, [3], 'the first read is the whole stream');
  await store.append(streamId, [{ type: 'RefreshTokenRotated', data: { grantId, tokenId: 'R1', replacedBy: 'R2', rotatedAt: '2026-01-01T00:30:00.000Z' } }, ...issued(grantId, 2)], 2n);
  const after = await same(t, store, events, streamId);
  t.same(reads, [3, 4], 'then the last event folded and the three after it');
  t.equal(after.state.status === 'active' && after.state.refreshTokens.get('r1')?.status, 'rotated');
  await same(t, store, events, streamId);
  t.same(reads, [3, 4, 1], 'nothing new: the last event folded alone');
});

t.test('a stream erased and written again is read in full', async (t) => {
  const { store, grantId, streamId } = await setUp();
  t.teardown(() => store.close());
  const { events, reads } = counting(store);
  await same(t, store, events, streamId);
  await store.deleteStream(streamId);
  await store.append(streamId, [consent(grantId), ...issued(grantId, 7), ...issued(grantId, 8)], 'no_stream');
  const again = await same(t, store, events, streamId);
  t.same(reads, [3, 3, 5], 'the event at the folded revision is another one: read again from the start');
  t.notOk(again.state.status === 'active' && again.state.refreshTokens.has('r1'), 'nothing of the erased stream');
});

t.test('a store that reads no partial stream still gets the right answer', async (t) => {
  const { store, grantId, streamId } = await setUp();
  t.teardown(() => store.close());
  const { events, reads } = counting(store, { ignoreFrom: true });
  await same(t, store, events, streamId);
  await store.append(streamId, [{ type: 'RefreshTokenRotated', data: { grantId, tokenId: 'R1', replacedBy: 'R2', rotatedAt: '2026-01-01T00:30:00.000Z' } }, ...issued(grantId, 2)], 2n);
  await same(t, store, events, streamId);
  t.same(reads, [3, 6, 6], 'the whole stream came back: read in full');
});
