import t from 'tap';
import { grantCredits } from '../../src/commands/credits.ts';
import { creditsStream } from '../../src/domain/credits.ts';
import { ARTICLES, SITE } from '../agentWork/corpus/homeCoffee.ts';
import { completion, fakeOpenAi, userPrompt } from '../helpers/fakeOpenAi.ts';
import { agentsPath } from './helpers.ts';
import { startProduct } from './productHelpers.ts';

// The product path with OPENAI_* pointing at a local OpenAI-compatible server: the real runner
// builds the refiner from config (createRefiner), the content agents' proposals go through it, and
// the opportunities read back over REST carry the model's wording. Credits are enforced.
const server = await fakeOpenAi(t);
const product = await startProduct(t, {
  plan: 'pro',
  domain: new URL(SITE).hostname,
  env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'test-model', OPENAI_TIMEOUT_MS: '2000', AI_CREDITS_ENFORCED: 'true' },
});
const { putArticle, activate, runToEnd, opportunities, inject, tenant } = product;
const url = (slug: string) => `${SITE}/${slug}/`;
const stored = new Map<string, { id: string }>();
for (const a of ARTICLES) stored.set(a.url, await putArticle(a));
const idOf = (slug: string) => stored.get(url(slug))!.id;
await grantCredits(product.app.services, { teamId: tenant.teamId, amount: 5 });

let interlinkingRunId = '';
const balance = async () => (await inject('GET', agentsPath(tenant.siteId))).json().credits.balance as number;
async function balanceBecomes(expected: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await balance()) !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return balance();
}

t.test('interlinking over REST with a model: its anchors and order, a made-up target dropped, one credit debited', async (t) => {
  const frothing = { source: idOf('dial-in-espresso'), target: idOf('milk-frothing') };
  server.set((_req, body) => {
    const prompt = JSON.parse(userPrompt(body)) as { proposals: Array<{ sourceArticleId: string; targetArticleId: string; anchor: string }> };
    const others = prompt.proposals.filter((p) => p.sourceArticleId !== frothing.source).slice(0, 2);
    return {
      status: 200,
      json: completion(
        JSON.stringify({
          items: [
            { sourceArticleId: frothing.source, targetArticleId: frothing.target, anchor: 'milk frothing' },
            { sourceArticleId: frothing.source, targetArticleId: 'an-article-the-model-made-up', anchor: 'espresso' },
            ...others.map((p) => ({ sourceArticleId: p.sourceArticleId, targetArticleId: p.targetArticleId, anchor: p.anchor })),
          ],
        }),
      ),
    };
  });
  await activate('interlinking', { maxLinksPerSource: 1 });
  const run = await runToEnd('interlinking');
  interlinkingRunId = run.id;
  t.match(run, { status: 'succeeded', counts: { articlesRead: 12, linksProposed: 3, aiRefined: 1, aiDropped: 1 }, creditsUsed: 1 });
  const found = await opportunities('interlinking');
  t.equal(found.length, 3, 'the subset the model kept');
  t.match(
    found.find((o) => o.sourceUrl === url('dial-in-espresso')),
    { targetUrl: url('milk-frothing'), anchorText: 'milk frothing', suggestedSentence: 'Our guide to milk frothing covers steaming for lattes and cappuccinos.' },
    "the model's anchor, the article's sentence verbatim",
  );
  t.notOk(found.some((o) => o.targetUrl === null || !ARTICLES.some((a) => a.url === o.targetUrl)), 'every target is an article of the site');
  t.equal(await balanceBecomes(4), 4, 'the refined run debited one credit');

  const sent = server.seen.at(-1)!;
  t.equal(sent.auth, 'Bearer sk-test');
  t.notMatch(userPrompt(sent.body), /@/, 'no e-mail address goes to the model');
});

t.test('ai_prompt over REST while the model fails: the heuristic questions, the run succeeded, no credit', async (t) => {
  server.set(() => ({ status: 200, json: completion('{"items": [ this is not json') }));
  await activate('ai_prompt', {});
  const run = await runToEnd('ai_prompt');
  t.match(run, { status: 'succeeded', counts: { aiRefinementSkipped: 1 }, creditsUsed: 0 });
  t.notOk('aiRefined' in run.counts);
  const found = await opportunities('ai_prompt');
  t.equal(found.length, run.counts['questionsProposed']);
  t.match(found.find((o) => (o.details as { question: string }).question === 'How do I descale my espresso machine?')?.details, { articleId: idOf('descaling-espresso-machine') });

  // Each later run has a question the site does not have yet (a run passes over the known ones).
  await activate('ai_prompt', { seedKeywords: ['moka pot'] });
  server.set(() => ({ status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } }));
  const again = await runToEnd('ai_prompt');
  t.match(again, { status: 'succeeded', counts: { aiRefinementSkipped: 1 }, creditsUsed: 0 });

  // The runner debits in log order: once a later refined run's credit is debited, the skipped runs were passed with no debit.
  await activate('ai_prompt', { seedKeywords: ['moka pot', 'milk jug'] });
  server.set((_req, body) => {
    const [first] = (JSON.parse(userPrompt(body)) as { proposals: Array<{ ref: number; question: string; articleId: string | null }> }).proposals;
    return { status: 200, json: completion(JSON.stringify({ items: [{ ref: first!.ref, question: first!.question, articleId: first!.articleId, rationale: 'r' }] })) };
  });
  const refined = await runToEnd('ai_prompt');
  t.match(refined, { status: 'succeeded', counts: { questionsProposed: 1, aiRefined: 1 }, creditsUsed: 1 });
  t.equal(await balanceBecomes(3), 3);
  const debits = (await product.app.services.events.readStream(creditsStream(tenant.teamId))).filter((e) => e.type === 'CreditsDebited');
  t.same(debits.map((e) => (e.data as { runId: string }).runId).sort(), [interlinkingRunId, refined.id].sort(), 'only the refined runs were debited');

  const calls = server.seen.length;
  const nothingNew = await runToEnd('ai_prompt');
  t.match(nothingNew, { status: 'succeeded', counts: { questionsProposed: 0 }, creditsUsed: 0 });
  t.equal(server.seen.length, calls, 'nothing new: the model is not asked, no credit used');
});
