import t from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { createTenant } from '../helpers/testApp.ts';
import { anotherSite, settle } from '../helpers/http.ts';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from './helpers.ts';

// Every other tool takes a siteId, which the person at a desktop assistant rarely knows: list_sites names the grant's sites.
const ctx = await startMcpApp();
t.teardown(() => ctx.app.close());
const { mcpUrl, tenant } = ctx;

t.test("list_sites answers the grant's sites, oldest first, whatever the token's scopes; nothing of the team's other sites or other teams'", async (t) => {
  const other = await createTenant(ctx.app.services);
  const outside = await anotherSite(ctx.app.services, tenant.teamId, 'outside.example.test');
  const unlicensed = await anotherSite(ctx.app.services, tenant.teamId, 'unlicensed.example.test');
  await changeSiteSettings(ctx.app.services, { siteId: unlicensed, changes: { licensed: false } });
  await settle(ctx.app.services);
  // A grant of two sites, with one scope only (no tool of the others').
  const token = await obtainToken(ctx, { scope: 'opportunities:read', siteIds: [unlicensed, tenant.siteId] });
  const client = await connectWithToken(mcpUrl, token);
  t.teardown(() => client.close());

  const listed = (await client.listTools()).tools.find((tool) => tool.name === 'list_sites');
  t.ok(listed, 'tools/list shows it');
  t.same(listed?.inputSchema.properties ?? {}, {}, 'it takes no arguments');
  t.equal(listed?.annotations?.readOnlyHint, true);

  const answer = toolAnswer(await client.callTool({ name: 'list_sites', arguments: {} }));
  t.equal(answer.isError, false);
  const sites = answer.body.sites as Array<Record<string, unknown>>;
  t.same(
    sites.map((s) => [s.id, s.licensed]),
    [
      [tenant.siteId, true],
      [unlicensed, false],
    ],
    'the two granted sites, the older first, with their licence',
  );
  t.equal(sites[1]!.domain, 'unlicensed.example.test');
  t.same(Object.keys(sites[0]!).sort(), ['createdAt', 'domain', 'id', 'licensed', 'plan', 'sendingDomainVerified'], 'no forwarding token or other internals');
  const ids = JSON.stringify(answer.body);
  t.notMatch(ids, outside, "not the team's site outside the grant");
  t.notMatch(ids, other.siteId, "not another team's");

  const extra = toolAnswer(await client.callTool({ name: 'list_sites', arguments: { siteId: tenant.siteId } }));
  t.equal(extra.isError, true, 'an argument it does not take');
  t.equal(extra.body.error?.code, 'VALIDATION_ERROR');

  // The ids it names are the ones the other tools take.
  const opportunities = toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: sites[0]!.id } }));
  t.equal(opportunities.isError, false, 'a listed id works in another tool');
});
