import t from 'tap';
import { z } from 'zod';
import { conversationsPageResponse } from '../../src/http/routes/conversations.ts';
import { conversationObject } from '../../src/http/routes/inboxSchemas.ts';
import { errorResponse } from '../../src/http/schemas.ts';
import { settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { ingest, PITCH, UNACTIONABLE } from '../ingestion/helpers.ts';

/**
 * The conversation list is written with JSON.stringify, not through zod (see its route): every
 * answer it gives must still be exactly what its schema, and so the OpenAPI document, says. Parsed
 * strictly: no key the schema lacks, none missing, every type and enum as declared.
 */
const strictPage = z.strictObject({ conversations: z.array(conversationObject.strict()), hasMore: z.boolean(), nextCursor: z.string().nullable() });

t.test('every conversation list answer parses strictly with the schema the OpenAPI document shows', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const base = `/api/v1/sites/${tenant.siteId}/outreach/conversations`;
  const get = (url: string) => app.fastify.inject({ url, headers: bearer(tenant.key) });
  for (let i = 0; i < 4; i++) t.equal((await ingest(app.fastify, tenant, { ...PITCH, from: `p${i}@prospect.io` })).statusCode, 201);
  t.equal((await ingest(app.fastify, tenant, { ...UNACTIONABLE, from: 'q@prospect.io' })).statusCode, 201);
  await settle(app.services);
  const ids = (await get(`${base}?limit=100`)).json().conversations.map((c: { id: string }) => c.id) as string[];
  t.equal(ids.length, 5);
  // Vary what the list shows: a status, a take-over, read and unread.
  const act = (id: string, action: string, payload?: object) =>
    app.fastify.inject({ method: 'POST', url: `${base}/${id}/${action}`, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });
  t.equal((await act(ids[0]!, 'status', { status: 'resolved' })).statusCode, 200);
  t.equal((await act(ids[1]!, 'takeover')).statusCode, 200);
  t.equal((await act(ids[2]!, 'read')).statusCode, 200);
  await settle(app.services);

  const seen = new Set<string>();
  for (const query of ['limit=2', 'limit=100', 'status=resolved', 'unread=false', 'aiPaused=false', 'contactEmail=P1@prospect.io', 'limit=1']) {
    let url: string | null = `${base}?${query}`;
    while (url) {
      const res = await get(url);
      t.equal(res.statusCode, 200, query);
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      const parsed = strictPage.safeParse(res.json());
      t.ok(parsed.success, `${query}: ${parsed.error?.message ?? 'matches'}`);
      t.same(parsed.data, res.json(), 'nothing stripped or changed by the schema');
      for (const c of parsed.data?.conversations ?? []) seen.add(`${c.status}/${c.handledBy}/${c.unread}/${c.entrySource}/${c.contactName === null}`);
      const next = (res.json() as { nextCursor: string | null }).nextCursor;
      url = next ? `${base}?${query}&cursor=${next}` : null;
    }
  }
  t.ok(seen.size >= 4, `the answers held several shapes of conversation (${[...seen].join(', ')})`);

  // Errors keep the envelope.
  const bad = await get(`${base}?cursor=not-a-cursor`);
  t.equal(bad.statusCode, 400);
  t.ok(errorResponse.strict().safeParse(bad.json()).success, 'the error envelope');
  t.equal(bad.json().error.code, 'VALIDATION_ERROR');

  // The OpenAPI document describes the 200 answer with the same schema.
  const doc = (await app.fastify.inject({ url: '/api/v1/openapi.json' })).json();
  const documented = doc.paths['/api/v1/sites/{siteId}/outreach/conversations'].get.responses['200'].content['application/json'].schema;
  const item = documented.properties.conversations.items;
  t.same(Object.keys(item.properties).sort(), Object.keys(conversationObject.shape).sort(), 'every field documented');
  t.same([...item.required].sort(), Object.keys(conversationObject.shape).sort(), 'all required');
  t.same(Object.keys(documented.properties).sort(), Object.keys(conversationsPageResponse.shape).sort());
});
