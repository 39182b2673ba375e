import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { revokeApiKey } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import { CONVERSATIONS } from '../../src/readModels/conversations.ts';
import { createServices } from '../../src/services.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest } from '../ingestion/helpers.ts';

t.test('projections in their own thread: every write route still reads its own writes', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-thread-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const app = await startTestApp({ projectionsInThread: true, dataDir });
  let closed = false;
  t.teardown(() => (closed ? undefined : app.close()));
  t.equal(app.services.config.PROJECTIONS_IN_THREAD, true);
  const tenant = await createTenant(app.services);

  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) => ingest(app.fastify, tenant, { ...PITCH, from: `sender${i}@prospect.io`, runExtraction: false })),
  );
  for (const res of responses) t.equal(res.statusCode, 201);
  const conversationIds = responses.map((res) => (res.json() as { conversationIds: string[] }).conversationIds[0]!);
  for (const id of conversationIds) {
    // The ingestion answered after the thread's checkpoint reached its append: the main thread's read model has it.
    const res = await app.fastify.inject({ url: `/api/v1/sites/${tenant.siteId}/outreach/conversations/${id}`, headers: bearer(tenant.key) });
    t.equal(res.statusCode, 200, `conversation ${id} readable at once`);
  }

  const { position } = await revokeApiKey(app.services, { apiKeyId: tenant.keyId });
  t.ok(await app.services.projections.waitFor(position!, 10_000), 'the revocation reaches the main thread');
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, runExtraction: false })).statusCode, 401, 'a revoked key is refused once its revocation is visible');

  // The thread wrote the read-model file: an in-process instance opened on it afterwards has the documents.
  await app.close();
  closed = true;
  const again = await createServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' }));
  t.teardown(() => again.close());
  for (const id of conversationIds) t.ok(await again.readModels.get(CONVERSATIONS, id), `conversation ${id} persisted`);
});
