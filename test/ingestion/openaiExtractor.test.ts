import t from 'tap';
import { OfflineExtractor } from '../../src/adapters/extractor/offlineExtractor.ts';
import { FallbackExtractor, OpenAiExtractor } from '../../src/adapters/extractor/openaiExtractor.ts';
import { getOpportunity } from '../../src/readModels/opportunities.ts';
import { type Behaviour, completion, fakeOpenAi } from '../helpers/fakeOpenAi.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest } from './helpers.ts';

const ASK = { targetUrl: 'https://model.example/page', anchorText: 'model anchor', suggestedSentence: 'A model sentence.', sourceUrl: 'https://example.test/post' };
const input = { subject: PITCH.subject, bodyText: PITCH.bodyText, from: PITCH.from, siteDomain: 'example.test' };

t.test('OpenAI adapter against a local OpenAI-compatible server', async (t) => {
  const server = await fakeOpenAi(t);
  const openai = new OpenAiExtractor({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'test-model', timeoutMs: 500 });

  t.test('structured output is requested and validated', async (t) => {
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ actionable: true, asks: [ASK] })) }));
    const out = await openai.extract(input);
    t.same(out, { asks: [ASK], extractor: 'openai:test-model' });
    const req = server.seen.at(-1)!;
    t.equal(req.path, '/v1/chat/completions');
    t.equal(req.auth, 'Bearer sk-test');
    t.equal(req.body.model, 'test-model');
    t.match(req.body.response_format, { type: 'json_schema', json_schema: { strict: true } });
  });

  t.test("a huge body is cut to the prompt's bound, as triage and drafting cut it", async (t) => {
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ actionable: false, asks: [] })) }));
    await openai.extract({ ...input, bodyText: `${PITCH.bodyText}\n${'filler '.repeat(40_000)}` });
    const prompt = (server.seen.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')!.content;
    t.ok(prompt.length < 20_500, `${prompt.length} characters`);
    t.match(prompt, PITCH.bodyText);
  });

  t.test('actionable false gives no asks', async (t) => {
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ actionable: false, asks: [] })) }));
    t.same((await openai.extract(input)).asks, []);
  });

  for (const [what, behaviour] of [
    ['an HTTP 500', () => ({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })],
    ['output that is not JSON', () => ({ status: 200, json: completion('Sure! Here are the links...') })],
    ['output failing the schema', () => ({ status: 200, json: completion(JSON.stringify({ actionable: true, asks: [{ targetUrl: 'javascript:alert(1)' }] })) })],
    ['a timeout', () => ({ status: 200, json: completion('{}'), delayMs: 2_000 })],
  ] as Array<[string, Behaviour]>) {
    t.test(`${what}: the adapter throws, the fallback uses the offline extractor`, async (t) => {
      server.set(behaviour);
      await t.rejects(openai.extract(input));
      const errors: unknown[] = [];
      const fallback = new FallbackExtractor(openai, new OfflineExtractor(), (e) => errors.push(e));
      const out = await fallback.extract(input);
      t.equal(errors.length, 1, 'the failure is reported');
      t.equal(out.extractor, 'offline (fallback from openai:test-model)');
      t.equal(out.asks[0]?.targetUrl, 'https://prospect.io/schema-guide', 'offline asks');
    });
  }

  t.test('wired through configuration: ingestion uses the model, and still succeeds when it fails', async (t) => {
    const app = await startTestApp({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'test-model', OPENAI_TIMEOUT_MS: '500' } });
    t.teardown(() => app.close());
    const tenant = await createTenant(app.services);
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ actionable: true, asks: [ASK, { ...ASK, targetUrl: 'https://model.example/two' }] })) }));
    const res = await ingest(app.fastify, tenant, PITCH);
    t.equal(res.json().opportunityIds.length, 2, 'two asks from the model');
    const opp = await getOpportunity(app.services.readModels, res.json().opportunityIds[0]);
    t.equal(opp!.targetUrl, ASK.targetUrl);
    server.set(() => ({ status: 503, json: { error: { message: 'overloaded' } } }));
    const down = await ingest(app.fastify, tenant, PITCH);
    t.equal(down.statusCode, 201, 'the model failing does not fail the ingestion');
    t.equal(down.json().entrySource, 'forwarded_actionable', 'offline fallback found the ask');
  });
});
