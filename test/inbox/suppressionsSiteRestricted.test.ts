import t from 'tap';
import { anotherSite, expectError, keyWith, settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest } from '../ingestion/helpers.ts';

/**
 * The suppression list is the team's. A key restricted to site S2 may add to it, but may not read it
 * or remove an entry another site recorded (an opt-out S1 recorded would let S1 mail the contact again).
 */
t.test('a site-restricted key adds to the team suppression list but neither reads it nor removes from it', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const a = await createTenant(app.services, { sendingDomainVerified: true });
  const s2 = await anotherSite(app.services, a.teamId);
  const s2Only = await keyWith(app.services, a.teamId, ['inbox:read', 'inbox:write'], s2);
  const base = (siteId: string) => `/api/v1/sites/${siteId}/outreach`;

  const conversation = (await ingest(app.fastify, a, PITCH)).json().conversationIds[0];
  t.equal((await app.fastify.inject({ method: 'POST', url: `${base(a.siteId)}/suppressions`, headers: bearer(a.key), payload: { email: PITCH.from, reason: 'opted_out' } })).statusCode, 201);
  await settle(app.services);

  const lists = await app.fastify.inject({ url: `${base(s2)}/suppressions`, headers: bearer(s2Only.key) });
  expectError(t, lists, 403, 'INSUFFICIENT_SCOPE', 'S2-only key lists');
  const removes = await app.fastify.inject({ method: 'DELETE', url: `${base(s2)}/suppressions/${encodeURIComponent(PITCH.from)}`, headers: bearer(s2Only.key) });
  expectError(t, removes, 403, 'INSUFFICIENT_SCOPE', "S2-only key removes S1's opt-out");
  // As every 403 INSUFFICIENT_SCOPE (RFC 6750 §3.1); no scope named, since none would do.
  for (const res of [lists, removes]) t.match(res.headers['www-authenticate'], /^Bearer error="insufficient_scope", error_description="[^"]+"$/, 'the challenge');
  await settle(app.services);
  expectError(t, await app.fastify.inject({ method: 'POST', url: `${base(a.siteId)}/conversations/${conversation}/reply`, headers: bearer(a.key), payload: { text: 'Hello again' } }), 409, 'CONTACT_SUPPRESSED', 'S1 still may not mail the contact');

  const added = await app.fastify.inject({ method: 'POST', url: `${base(s2)}/suppressions`, headers: bearer(s2Only.key), payload: { email: 'someone@else.test' } });
  t.equal(added.statusCode, 201, 'adding stays open to a key of one site');
  const listed = await app.fastify.inject({ url: `${base(a.siteId)}/suppressions`, headers: bearer(a.key) });
  t.same(listed.json().suppressions.map((s: { email: string }) => s.email).sort(), [PITCH.from.toLowerCase(), 'someone@else.test'], 'a team-wide key reads the whole list');

  // A key restricted to a team's only site reaches every site of the team.
  const solo = await createTenant(app.services);
  const soloKey = await keyWith(app.services, solo.teamId, ['inbox:read'], solo.siteId);
  t.equal((await app.fastify.inject({ url: `${base(solo.siteId)}/suppressions`, headers: bearer(soloKey.key) })).statusCode, 200);
});
