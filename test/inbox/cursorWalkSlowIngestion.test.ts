import t from 'tap';
import { settle } from '../helpers/http.ts';
import { TestClock, bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest } from '../ingestion/helpers.ts';

type Conv = { id: string; contactEmail: string; createdAt: string };

/**
 * Lists are newest first by `createdAt`. An ingestion whose extraction is slow (an LLM call) and that
 * is stored after a faster, later one is stamped when it is decided, after the extraction: it lands
 * at the top of the list, where a new conversation shows, never behind a client's cursor.
 */
t.test('a slow ingestion stored during a cursor walk lands at the top, not behind the cursor', async (t) => {
  const clock = new TestClock();
  const app = await startTestApp({ clock });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const base = `/api/v1/sites/${tenant.siteId}/outreach/conversations`;
  const get = async (url: string) => (await app.fastify.inject({ url, headers: bearer(tenant.key) })).json() as { conversations: Conv[]; nextCursor: string | null };

  for (const from of ['old1@prospect.io', 'old2@prospect.io']) {
    clock.advance(1_000);
    t.equal((await ingest(app.fastify, tenant, { ...PITCH, from })).statusCode, 201);
  }
  // The next extraction is slow (it stands for an LLM call): a later, faster ingestion is stored first.
  const extractor = app.services.extractor;
  const original = extractor.extract.bind(extractor);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inExtraction = new Promise<void>((resolve) => (entered = resolve));
  let first = true;
  extractor.extract = async (input) => {
    if (first) {
      first = false;
      entered();
      await gate;
    }
    return original(input);
  };
  t.teardown(() => {
    extractor.extract = original;
  });
  clock.advance(1_000);
  const slow = ingest(app.fastify, tenant, { ...PITCH, from: 'slow@prospect.io' });
  await inExtraction;
  clock.advance(1_000);
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, from: 'fast@prospect.io' })).statusCode, 201);

  // A client walks two a page; the slow ingestion is stored after its first page.
  const walked: Conv[] = [];
  let page = await get(`${base}?limit=2`);
  walked.push(...page.conversations);
  clock.advance(1_000);
  release();
  t.equal((await slow).statusCode, 201);
  await settle(app.services);
  while (page.nextCursor) {
    page = await get(`${base}?limit=2&cursor=${page.nextCursor}`);
    walked.push(...page.conversations);
  }
  t.same(walked.map((c) => c.contactEmail), ['fast@prospect.io', 'old2@prospect.io', 'old1@prospect.io'], 'the walk saw every conversation there was when it began, once each');
  const top = (await get(`${base}?limit=1`)).conversations[0]!;
  t.equal(top.contactEmail, 'slow@prospect.io', 'the slow one is on the first page, the newest');
});
