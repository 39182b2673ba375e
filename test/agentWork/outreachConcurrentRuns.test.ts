// Two Outreach Agent runs of one site at the same time (two on-demand runs, or a scheduled and an
// on-demand one) both pick the same `new` prospect. The first to record the pitch sends it; the
// other finds the prospect handled and sends nothing (it used to mail a second cold pitch, over the cap).
import t from 'tap';
import { ARTICLES, SITE } from './corpus/homeCoffee.ts';
import { html, startSite } from './sites.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { testCertificate } from '../webhooks/helpers.ts';
import { startProduct } from '../agentsApi/productHelpers.ts';
import { agentsPath } from '../agentsApi/helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('two outreach runs at once: one prospect gets one pitch, within the cap', async (t) => {
  const { caFile } = await testCertificate();
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  // The home page takes a moment (a slow prospect site): both runs are discovering its contact at once.
  const roast = await startSite({
    '/': { delayMs: 1500, body: html('Roast Weekly: espresso and burr grinder reviews', '<p>Write to <a href="mailto:editor@roastweekly.example">the editor</a>.</p>') },
  });
  t.teardown(() => roast.close());
  const product = await startProduct(t, {
    plan: 'advanced',
    domain: new URL(SITE).hostname,
    sendingDomainVerified: true,
    // Three runner slots: a team may hold two (every slot but one).
    env: { OUTBOUND_SMTP_URL: sink.url, WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', WEBHOOK_EXTRA_CA_FILE: caFile, AGENT_RUN_CONCURRENCY: '3' },
  });
  const { inject, site, tenant } = product;
  for (const a of ARTICLES.slice(0, 3)) await product.putArticle(a);
  const imported = await inject('POST', `${site}/agents/outreach/prospects`, { prospects: [{ url: roast.origin, name: 'Roast Weekly' }] });
  t.equal(imported.statusCode, 201, imported.body);
  await product.activate('outreach', { dailySendCap: 1 }); // a cap of one pitch a day

  const a = await inject('POST', `${agentsPath(tenant.siteId)}/outreach/run`);
  const b = await inject('POST', `${agentsPath(tenant.siteId)}/outreach/run`);
  t.equal(a.statusCode, 202);
  t.equal(b.statusCode, 202);
  const ids = [a.json().run.id, b.json().run.id];
  const deadline = Date.now() + 30_000;
  let runs: { id: string; status: string; counts: Record<string, number>; opportunityIds: string[] }[] = [];
  for (;;) {
    runs = (await inject('GET', `${agentsPath(tenant.siteId)}/runs?agentKey=outreach`)).json().runs;
    if (ids.every((id) => runs.some((r) => r.id === id && (r.status === 'succeeded' || r.status === 'failed')))) break;
    if (Date.now() > deadline) throw new Error('runs did not end');
    await sleep(100);
  }
  await sleep(300);
  const mine = runs.filter((r) => ids.includes(r.id));
  t.same(mine.map((r) => r.status), ['succeeded', 'succeeded']);
  t.equal(sink.received.length, 1, 'one prospect, one contact: one cold pitch');
  t.equal((await product.opportunities('outreach')).length, 1, 'one conversation opened');
  t.same(mine.map((r) => r.counts.pitchesSent).sort(), [0, 1]);
  t.same(mine.map((r) => r.counts.alreadyHandled).sort(), [0, 1], 'the other run counts the prospect as handled elsewhere');
});
