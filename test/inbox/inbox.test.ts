import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError, settle } from '../helpers/http.ts';
import { eventsOfType, ingest, PITCH, UNACTIONABLE } from '../ingestion/helpers.ts';
import { envelopes, startAgentHarness } from '../agent/helpers.ts';

const base = (siteId: string) => `/api/v1/sites/${siteId}/outreach`;

t.test('conversation pages stay exact while ingestions run concurrently', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const get = (url: string) => app.fastify.inject({ url, headers: bearer(tenant.key) });
  for (let i = 0; i < 12; i++) t.equal((await ingest(app.fastify, tenant, { ...PITCH, from: `p${i}@prospect.io` })).statusCode, 201);
  await settle(app.services);
  const before = (await get(`${base(tenant.siteId)}/conversations?limit=100`)).json().conversations.map((c: { id: string }) => c.id);
  t.equal(before.length, 12);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const arrivals: Promise<unknown>[] = [];
  do {
    const res = await get(`${base(tenant.siteId)}/conversations?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
    t.equal(res.statusCode, 200);
    const body = res.json() as { conversations: Array<{ id: string }>; nextCursor: string | null; hasMore: boolean };
    t.equal(body.hasMore, body.nextCursor !== null);
    seen.push(...body.conversations.map((c) => c.id));
    cursor = body.nextCursor;
    // New pitches arrive while the client pages.
    for (let i = 0; i < 3; i++) arrivals.push(ingest(app.fastify, tenant, { ...PITCH, from: `new${pages}-${i}@prospect.io` }));
    await new Promise((r) => setTimeout(r, 30));
    pages++;
  } while (cursor);
  await Promise.all(arrivals);
  t.same(seen, before, 'every conversation there when paging began, once, newest first; newer ones never shift the pages');
  await settle(app.services);
  const all = (await get(`${base(tenant.siteId)}/conversations?limit=100`)).json().conversations as Array<{ createdAt: string; id: string }>;
  t.equal(all.length, 12 + arrivals.length);
  const sorted = [...all].sort((x, y) => (`${y.createdAt}|${y.id}` < `${x.createdAt}|${x.id}` ? -1 : 1));
  t.same(all, sorted, 'newest first by createdAt then id');
  expectError(t, await get(`${base(tenant.siteId)}/conversations?cursor=garbage`), 400, 'VALIDATION_ERROR', 'a forged cursor');
  // Every list sorts by a string (a time, an address): a number in its place read as an empty last page.
  const numeric = Buffer.from(JSON.stringify([99999999999999, 'zzz'])).toString('base64url');
  expectError(t, await get(`${base(tenant.siteId)}/conversations?cursor=${numeric}`), 400, 'VALIDATION_ERROR', 'a cursor with a number for its time');
  expectError(t, await get(`${base(tenant.siteId)}/conversations?limit=101`), 400, 'VALIDATION_ERROR', 'limit over 100');
  expectError(t, await get(`${base(tenant.siteId)}/conversations?limit=0`), 400, 'VALIDATION_ERROR', 'limit 0');
  for (const empty of ['', '%20%20', '%00', 'NaN', `${'a'.repeat(5_000)}%40b.io`]) {
    expectError(t, await get(`${base(tenant.siteId)}/conversations?contactEmail=${empty}`), 400, 'VALIDATION_ERROR', `contactEmail=${empty.slice(0, 20)}`);
  }
  // No query on an item's route either: a parameter there was ignored.
  const one = all[0]!.id;
  expectError(t, await get(`${base(tenant.siteId)}/conversations/${one}?zzz=1`), 400, 'VALIDATION_ERROR', 'an unknown parameter on one conversation');
  for (const limit of ['0x10', '1e1', '+5', '5.0', ' 5', 'abc', '5&limit=6']) {
    const res = await get(`${base(tenant.siteId)}/conversations?limit=${limit}`);
    expectError(t, res, 400, 'VALIDATION_ERROR', `limit=${limit}`);
    t.notMatch(res.json().error.message, /NaN/, `limit=${limit}: the message names no NaN`);
  }
  t.equal((await get(`${base(tenant.siteId)}/conversations?limit=007`)).statusCode, 200, 'leading zeros are decimal digits');
  // However many: `0100` was taken and `00001` refused (four digits at most).
  t.equal((await get(`${base(tenant.siteId)}/conversations?limit=00001`)).json().conversations.length, 1, 'limit=00001 is 1');
  expectError(t, await get(`${base(tenant.siteId)}/conversations?limit=${'9'.repeat(21)}`), 400, 'VALIDATION_ERROR', 'a limit of 21 digits');
  t.equal((await get(`${base(tenant.siteId)}/conversations`)).json().conversations.length, Math.min(25, all.length), 'default limit 25');
});

t.test('filters: status, aiPaused, unread, contactEmail, created and updated ranges; opportunities by entry source and stub', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const get = async (url: string) => {
    const res = await app.fastify.inject({ url: `${base(tenant.siteId)}/${url}`, headers: bearer(tenant.key) });
    t.equal(res.statusCode, 200, url);
    return res.json();
  };
  await ingest(app.fastify, tenant, { ...PITCH, from: 'Jane@Prospect.io' });
  await settle(app.services);
  const [first] = (await get('conversations')).conversations;
  await new Promise((r) => setTimeout(r, 5));
  await ingest(app.fastify, tenant, UNACTIONABLE);
  await settle(app.services);
  const ids = (q: string) => get(q).then((b) => (b.conversations ?? b.opportunities).map((c: { id: string }) => c.id));
  t.same(await ids('conversations?contactEmail=jane%40PROSPECT.io'), [first.id], 'contact email, case-insensitive');
  t.same(await ids('conversations?status=resolved'), []);
  t.equal((await ids('conversations?status=open')).length, 2);
  // The agent is not active on this site: every conversation is paused.
  t.equal((await ids('conversations?aiPaused=true')).length, 2);
  t.same(await ids('conversations?aiPaused=false'), []);
  t.equal((await ids('conversations?unread=true')).length, 2, 'a prospect\'s message leaves its conversation unread');
  t.same(await ids('conversations?unread=false'), []);
  t.same(await ids(`conversations?createdBefore=${encodeURIComponent(first.createdAt)}`), []);
  t.same(await ids(`conversations?createdAfter=${encodeURIComponent(first.createdAt)}`).then((x: string[]) => x.length), 1);
  // Finer than the millisecond the read models keep: an exclusive upper bound just after an item keeps it, a lower one drops it.
  const justAfterFirst = first.createdAt.replace(/Z$/, '5Z');
  t.same(await ids(`conversations?createdBefore=${encodeURIComponent(justAfterFirst)}`), [first.id], 'createdBefore …0005 past it keeps it');
  t.same(await ids(`conversations?createdAfter=${encodeURIComponent(justAfterFirst)}`).then((x: string[]) => x.includes(first.id)), false, 'createdAfter …0005 past it drops it');
  t.equal(await ids(`conversations?createdBefore=${encodeURIComponent('9999-12-31T23:59:59.9999Z')}`).then((x: string[]) => x.length), 2, 'rounding up stays within 9999');
  t.same(await ids(`conversations?updatedAfter=2000-01-01T00:00:00Z&updatedBefore=2100-01-01T00:00:00Z`).then((x: string[]) => x.length), 2);
  t.same(await ids(`conversations?updatedAfter=2000-01-01t00:00:00z&updatedBefore=2100-01-01t00:00:00z`).then((x: string[]) => x.length), 2, 'a lower-case t and z (RFC 3339 §5.6)');
  t.same(await ids('conversations?updatedAfter=2100-01-01T00:00:00Z'), []);
  expectError(t, await app.fastify.inject({ url: `${base(tenant.siteId)}/conversations?status=nope`, headers: bearer(tenant.key) }), 400, 'VALIDATION_ERROR');
  expectError(t, await app.fastify.inject({ url: `${base(tenant.siteId)}/conversations?createdAfter=yesterday`, headers: bearer(tenant.key) }), 400, 'VALIDATION_ERROR');
  // Offsets that carry the instant past year 9999 (or before 0000) in UTC would compare wrongly as strings: refused.
  for (const at of ['9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00+01:00']) {
    expectError(t, await app.fastify.inject({ url: `${base(tenant.siteId)}/conversations?createdBefore=${encodeURIComponent(at)}`, headers: bearer(tenant.key) }), 400, 'VALIDATION_ERROR', at);
  }
  t.same(await ids(`conversations?createdBefore=${encodeURIComponent('9999-12-31T23:59:59+00:00')}`).then((x: string[]) => x.length), 2, 'the last instant of 9999 is a valid bound');

  const opportunities = (await get('opportunities')).opportunities as Array<Record<string, unknown>>;
  t.equal(opportunities.length, 2);
  const real = opportunities.find((o) => o.stub === false)!;
  t.match(real, { targetUrl: 'https://prospect.io/schema-guide', sourceUrl: 'https://example.test/blog/seo-tips', entrySource: 'forwarded_actionable', conversationId: first.id });
  t.same(await ids('opportunities?stub=true').then((x: string[]) => x.length), 1);
  t.same(await ids('opportunities?entrySource=forwarded_actionable'), [real.id]);
  t.same((await get(`opportunities/${real.id}`)).opportunity, real);
  const page1 = await get('opportunities?limit=1');
  const page2 = await get(`opportunities?limit=1&cursor=${page1.nextCursor}`);
  t.same([...page1.opportunities, ...page2.opportunities].map((o: { id: string }) => o.id), opportunities.map((o) => o.id));
  t.equal(page2.nextCursor, null);
});

t.test('one conversation after the agent replied: inbound then outbound, its opportunity and history', async (t) => {
  const harness = await startAgentHarness();
  t.teardown(() => harness.close());
  const { h } = harness;
  const { conversationIds } = await harness.pitch();
  const conversationId = conversationIds[0]!;
  await harness.waitForEvent(conversationId, 'ReplySent');
  await settle(h.app.services);
  const res = await h.app.fastify.inject({ url: `${base(h.tenant.siteId)}/conversations/${conversationId}`, headers: bearer(h.tenant.key) });
  t.equal(res.statusCode, 200);
  const c = res.json().conversation;
  t.same(c.messages.map((m: { direction: string; senderType: string }) => [m.direction, m.senderType]), [['inbound', 'recipient'], ['outbound', 'agent']]);
  t.equal(c.messages[0].from, PITCH.from);
  t.equal(c.messages[1].to, PITCH.from);
  t.equal(c.messages[1].deliveryStatus, 'sent');
  t.equal(c.handledBy, 'agent');
  t.equal(c.opportunity.id, c.opportunityId);
  t.equal(c.opportunity.targetUrl, 'https://prospect.io/schema-guide');
  t.ok(Array.isArray(c.statusHistory));
  t.ok(c.updatedAt >= c.createdAt);
});

t.test('suppression list: add (201, then 200), list, remove as an event; only an addition is a webhook', async (t) => {
  const harness = await startAgentHarness({ startAgent: false });
  t.teardown(() => harness.close());
  const { h } = harness;
  const url = `${base(h.tenant.siteId)}/suppressions`;
  const send = (method: 'GET' | 'POST' | 'DELETE', path = '', payload?: object) =>
    h.app.fastify.inject({ method, url: url + path, headers: bearer(h.tenant.key), ...(payload ? { payload } : {}) });

  const added = await send('POST', '', { email: 'Bob@Example.com' });
  t.equal(added.statusCode, 201);
  t.match(added.json().suppression, { email: 'bob@example.com', reason: 'manual', source: 'manual' });
  t.equal((await send('POST', '', { email: 'bob@example.com' })).statusCode, 200, 'again: nothing changed');
  t.equal((await send('POST', '', { email: 'bob@example.com', reason: 'complained' })).statusCode, 201, 'a stronger reason');
  for (const e of ['a@example.com', 'c@example.com']) t.equal((await send('POST', '', { email: e })).statusCode, 201);
  expectError(t, await send('POST', '', { email: 'not-an-address' }), 400, 'VALIDATION_ERROR');

  const first = (await send('GET', '?limit=2')).json();
  const second = (await send('GET', `?limit=2&cursor=${first.nextCursor}`)).json();
  t.same([...first.suppressions, ...second.suppressions].map((s: { email: string }) => s.email), ['a@example.com', 'bob@example.com', 'c@example.com']);
  t.equal(second.hasMore, false);

  t.equal((await send('DELETE', '/BOB%40example.com')).statusCode, 200);
  expectError(t, await send('DELETE', '/bob%40example.com'), 404, 'NOT_FOUND', 'removed already');
  t.same((await send('GET')).json().suppressions.map((s: { email: string }) => s.email), ['a@example.com', 'c@example.com']);
  t.equal((await eventsOfType(h.app.services, 'ContactSuppressed')).length, 4, 'history stays');
  t.equal((await eventsOfType(h.app.services, 'ContactUnsuppressed')).length, 1);

  // Unsuppressed: ingestion no longer pauses the agent for this address.
  const pitched = (await ingest(h.app.fastify, h.tenant, { ...PITCH, from: 'bob@example.com' })).json();
  t.not(pitched.skipReason, 'contact_suppressed');
  const suppressed = (await ingest(h.app.fastify, h.tenant, { ...PITCH, from: 'a@example.com' })).json();
  t.equal(suppressed.skipReason, 'contact_suppressed', 'a listed address still is');

  const deadline = Date.now() + 10_000;
  while (envelopes(harness.receiver, 'outreach.contact_suppressed').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  const hooks = envelopes(harness.receiver, 'outreach.contact_suppressed');
  t.equal(hooks.length, 4, 'one webhook per addition, none for the removal');
  t.same(new Set(harness.receiver.received.map((r) => r.json.type)).has('outreach.contact_unsuppressed'), false);
});

t.test('a long suppressed address (up to 320 characters) can be removed by its path', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const url = `${base(tenant.siteId)}/suppressions`;
  // 64 characters is the local part's limit in RFC 5321; the domain may be long.
  const email = `${'a'.repeat(64)}@${'sub-domain.'.repeat(20)}example.com`;
  const added = await app.fastify.inject({ method: 'POST', url, headers: bearer(tenant.key), payload: { email } });
  t.equal(added.statusCode, 201, added.body);
  const removed = await app.fastify.inject({ method: 'DELETE', url: `${url}/${encodeURIComponent(email)}`, headers: bearer(tenant.key) });
  t.equal(removed.statusCode, 200, removed.body);
  t.same((await app.fastify.inject({ method: 'GET', url, headers: bearer(tenant.key) })).json().suppressions, []);
});
