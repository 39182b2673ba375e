import t from 'tap';
import { createTriage } from '../../src/adapters/triage/createTriage.ts';
import { OfflineTriage } from '../../src/adapters/triage/offlineTriage.ts';
import { FallbackTriage, OpenAiTriage } from '../../src/adapters/triage/openaiTriage.ts';
import { loadConfig } from '../../src/config.ts';
import type { TriageInput } from '../../src/ports/triage.ts';
import { type Behaviour, completion, fakeOpenAi, userPrompt } from '../helpers/fakeOpenAi.ts';

/** The offline classifier declines this (casino); the model's answer is recognisably different. */
const input: TriageInput = {
  subject: 'Guest post collaboration',
  bodyText: 'Hi, we would like to publish a guest post about online casino bonuses with a link to https://spinwin-casino.bet.',
  from: 'outreach@spinwin-casino.bet',
  fromName: 'Spin Win',
  siteDomain: 'greenthumb.blog',
  isReply: false,
  ask: { targetUrl: 'https://spinwin-casino.bet', anchorText: 'casino bonuses', suggestedSentence: null, sourceUrl: null },
};

t.test('OpenAI triage against a local OpenAI-compatible server', async (t) => {
  const server = await fakeOpenAi(t);
  const openai = new OpenAiTriage({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'test-model', timeoutMs: 500 });

  t.test('structured output is requested, validated and used', async (t) => {
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['Risky niche', 'negotiation'] })) }));
    const decision = await openai.triage(input);
    t.same(decision, { outcome: 'needs_human', classifier: 'openai:test-model', reasons: ['risky_niche', 'negotiation'] }, 'reasons become snake_case codes');
    const req = server.seen.at(-1)!;
    t.equal(req.path, '/v1/chat/completions');
    t.equal(req.auth, 'Bearer sk-test');
    t.equal(req.body.model, 'test-model');
    t.match(req.body.response_format, { type: 'json_schema', json_schema: { name: 'triage_decision', strict: true } });
    const prompt = userPrompt(req.body);
    t.match(prompt, 'Recipient site: greenthumb.blog');
    t.match(prompt, 'Kind: a first message');
    t.match(prompt, 'https://spinwin-casino.bet (anchor "casino bonuses")');
    t.match(prompt, input.bodyText);
  });

  t.test('a reply on a thread is described as one', async (t) => {
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'opt_out', reasons: ['opt_out_phrase'] })) }));
    const decision = await openai.triage({ ...input, isReply: true, ask: null, bodyText: 'Bitte nicht mehr schreiben.' });
    t.equal(decision.outcome, 'opt_out');
    t.match(userPrompt(server.seen.at(-1)!.body), /Kind: a reply on an existing thread[\s\S]*Link the sender asks for: none found/);
  });

  for (const [what, behaviour] of [
    ['an HTTP 500', () => ({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })],
    ['output that is not JSON', () => ({ status: 200, json: completion('I think you should accept it.') })],
    ['an outcome outside the four', () => ({ status: 200, json: completion(JSON.stringify({ outcome: 'maybe', reasons: ['unsure'] })) })],
    ['no reasons', () => ({ status: 200, json: completion(JSON.stringify({ outcome: 'accept', reasons: [] })) })],
    ['empty content', () => ({ status: 200, json: completion('') })],
    ['a timeout', () => ({ status: 200, json: completion('{}'), delayMs: 2_000 })],
  ] as Array<[string, Behaviour]>) {
    t.test(`${what}: the adapter throws, the fallback uses the offline classifier`, async (t) => {
      server.set(behaviour);
      await t.rejects(openai.triage(input));
      const errors: unknown[] = [];
      const fallback = new FallbackTriage(openai, new OfflineTriage(), (e) => errors.push(e));
      const decision = await fallback.triage(input);
      t.equal(errors.length, 1, 'the failure is reported');
      t.same(decision, { outcome: 'decline', classifier: 'offline-v1 (fallback from openai:test-model)', reasons: ['prohibited_niche'] });
    });
  }

  t.test('createTriage: offline without a key, the model with fallback when one is configured', async (t) => {
    const offline = createTriage(loadConfig({}));
    t.equal(offline.name, 'offline-v1');
    t.equal((await offline.triage(input)).classifier, 'offline-v1');

    const errors: unknown[] = [];
    const configured = createTriage(
      loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'other-model', OPENAI_TIMEOUT_MS: '500' }),
      (e) => errors.push(e),
    );
    t.equal(configured.name, 'openai:other-model');
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'accept', reasons: ['guest_post'] })) }));
    t.same(await configured.triage(input), { outcome: 'accept', classifier: 'openai:other-model', reasons: ['guest_post'] });
    t.equal(server.seen.at(-1)!.body.model, 'other-model');
    server.set(() => ({ status: 503, json: { error: { message: 'overloaded' } } }));
    t.equal((await configured.triage(input)).classifier, 'offline-v1 (fallback from openai:other-model)');
    t.equal(errors.length, 1);

    // On a thread the model's accept is a thanks or an agreement, with reasons of its own wording: the
    // rules say which thanks gets no reply, and any other accept there goes to a person.
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'accept', reasons: ['simple thanks on thread'] })) }));
    const onThread = { ...input, isReply: true, ask: null, subject: 'Re: Guest post' };
    t.same(await configured.triage({ ...onThread, bodyText: 'Thank you!' }), { outcome: 'accept', classifier: 'openai:other-model', reasons: ['simple_thanks_on_thread', 'thanks_on_thread'] });
    t.same(
      await configured.triage({ ...onThread, bodyText: 'Sure, we added a link to your worm bin article today. Could you also link our new guide at https://x.example/guide?' }),
      { outcome: 'needs_human', classifier: 'openai:other-model', reasons: ['simple_thanks_on_thread', 'thread_reply'] },
    );
    t.same((await configured.triage({ ...input, bodyText: 'Thank you!' })).reasons, ['simple_thanks_on_thread'], 'a first message keeps the model accept as given');
  });
});
