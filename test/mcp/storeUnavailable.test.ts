import t from 'tap';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { lockedFileError } from '../helpers/lockedStore.ts';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from './helpers.ts';

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
