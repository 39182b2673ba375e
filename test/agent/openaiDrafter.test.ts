import t from 'tap';
import { createDrafter } from '../../src/adapters/drafting/createDrafter.ts';
import { DraftRejectedError, FallbackDrafter, OpenAiDrafter } from '../../src/adapters/drafting/openaiDrafter.ts';
import { TemplateDrafter } from '../../src/adapters/drafting/templateDrafter.ts';
import { loadConfig } from '../../src/config.ts';
import type { DraftInput } from '../../src/ports/drafter.ts';
import { type Behaviour, completion, fakeOpenAi, userPrompt } from '../helpers/fakeOpenAi.ts';

const ASK = { targetUrl: 'https://soilsmart.io/compost-guide', anchorText: 'compost guide', suggestedSentence: 'See this compost guide.', sourceUrl: 'https://greenthumb.blog/raised-beds' };
const input: DraftInput = {
  outcome: 'accept',
  subject: 'Re: Guest post idea',
  bodyText: 'Hi, could you link to https://soilsmart.io/compost-guide from your raised beds post?',
  from: 'tom@soilsmart.io',
  fromName: 'Tom Baker',
  asks: [ASK],
  siteDomain: 'greenthumb.blog',
  settings: { senderName: 'Anna Green', signature: 'Editor, Greenthumb', tone: 'formal' },
};
const SECOND_ASK = { targetUrl: 'https://soilsmart.io/mulch', anchorText: null, suggestedSentence: null, sourceUrl: null };
const MODEL_BODY = 'Dear Tom,\n\nThank you for the suggestion. We are glad to add https://soilsmart.io/compost-guide to https://greenthumb.blog/raised-beds and will confirm here once it is live.';
const answer = (body: string): Behaviour => () => ({ status: 200, json: completion(JSON.stringify({ body })) });

t.test('OpenAI drafter against a local OpenAI-compatible server', async (t) => {
  const server = await fakeOpenAi(t);
  const openai = new OpenAiDrafter({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'test-model', timeoutMs: 500 });

  t.test("a valid draft is used: the model's body, the service's subject, sign-off and signature", async (t) => {
    server.set(answer(MODEL_BODY));
    const draft = await openai.draft(input);
    t.same(draft, {
      subject: 'Re: Guest post idea',
      text: `${MODEL_BODY}\n\nKind regards,\nAnna Green\n\n-- \nEditor, Greenthumb\n`,
      drafter: 'openai:test-model',
    });
    const req = server.seen.at(-1)!;
    t.equal(req.path, '/v1/chat/completions');
    t.equal(req.auth, 'Bearer sk-test');
    t.equal(req.body.model, 'test-model');
    t.match(req.body.response_format, { type: 'json_schema', json_schema: { name: 'reply_draft', strict: true } });
    const prompt = userPrompt(req.body);
    for (const line of ['Outcome: accept', 'Tone: formal', `Link to place: ${ASK.targetUrl}`, 'Anchor text: compost guide', `Page of the site: ${ASK.sourceUrl}`, input.bodyText]) {
      t.match(prompt, line);
    }
  });

  t.test('a pitch with two asks: both are in the prompt, and a draft naming both is used', async (t) => {
    const body = `${MODEL_BODY} We will also add ${SECOND_ASK.targetUrl}.`;
    server.set(answer(body));
    const draft = await openai.draft({ ...input, asks: [ASK, SECOND_ASK] });
    t.equal(draft.drafter, 'openai:test-model');
    const prompt = userPrompt(server.seen.at(-1)!.body);
    t.match(prompt, `Link 1 to place: ${ASK.targetUrl}`);
    t.match(prompt, `Link 2 to place: ${SECOND_ASK.targetUrl}`);
  });

  t.test("a link named with another case of scheme and host is the same link", async (t) => {
    server.set(answer(MODEL_BODY.replace('https://soilsmart.io/', 'HTTPS://SoilSmart.IO/')));
    t.equal((await openai.draft(input)).drafter, 'openai:test-model');
  });

  t.test("domains written without a scheme are fine when they are the site's, a given link's or the sender's", async (t) => {
    server.set(answer(`${MODEL_BODY} Your SoilSmart.io guide (blog.soilsmart.io too) suits www.greenthumb.blog and shop.greenthumb.blog well; write to tom.baker@soilsmart.io if anything changes.`));
    t.equal((await openai.draft(input)).drafter, 'openai:test-model');
  });

  t.test('a decline that names no link is used', async (t) => {
    server.set(answer('Dear Tom,\n\nThank you for thinking of us. We are unable to accept this proposal.'));
    const draft = await openai.draft({ ...input, outcome: 'decline' });
    t.equal(draft.drafter, 'openai:test-model');
    t.match(draft.text, /unable to accept/);
  });

  for (const [what, behaviour, draftInput] of [
    ['an HTTP 500', () => ({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } }), input],
    ['output that is not JSON', () => ({ status: 200, json: completion('Dear Tom, sure thing!') }), input],
    ['output failing the schema', () => ({ status: 200, json: completion(JSON.stringify({ text: MODEL_BODY })) }), input],
    ['a body too short to be a reply', answer('Hi.'), input],
    ['a URL the model was not given', answer(`${MODEL_BODY} Also see https://evil.example/pay-here.`), input],
    ['a URL without a scheme the model was not given', answer(`${MODEL_BODY} Pay the placement fee at www.evil-shop.com first.`), input],
    ['an address on a domain no link was given for', answer(`${MODEL_BODY} Or wire it to pay@evil-shop.com.`), input],
    ['a URL without a scheme on an IDN or an IP address', answer(`${MODEL_BODY} See evil-shop.xn--p1ai or 203.0.113.5 for the fee.`), input],
    ['an accept that leaves the link out', answer('Dear Tom,\n\nThank you, we are happy to go ahead and will confirm once it is live.'), input],
    ['a decline that names the link', answer(MODEL_BODY), { ...input, outcome: 'decline' }],
    ['an accept of a two-ask pitch that names only one link', answer(MODEL_BODY), { ...input, asks: [ASK, SECOND_ASK] }],
    ['a timeout', () => ({ status: 200, json: completion(JSON.stringify({ body: MODEL_BODY })), delayMs: 2_000 }), input],
  ] as Array<[string, Behaviour, DraftInput]>) {
    t.test(`${what}: the adapter throws, the fallback drafts from the template`, async (t) => {
      server.set(behaviour);
      await t.rejects(openai.draft(draftInput));
      const errors: unknown[] = [];
      const fallback = new FallbackDrafter(openai, new TemplateDrafter(), (e) => errors.push(e));
      const draft = await fallback.draft(draftInput);
      t.equal(errors.length, 1, 'the failure is reported');
      t.equal(errors[0] instanceof DraftRejectedError, /URL|link/.test(what), 'a draft the service refuses is told apart');
      t.equal(draft.drafter, 'template-v1 (fallback from openai:test-model)');
      t.same(draft, { ...(await new TemplateDrafter().draft(draftInput)), drafter: draft.drafter }, 'the template draft');
    });
  }

  t.test('createDrafter: the template without a key, the model with fallback when one is configured', async (t) => {
    const offline = createDrafter(loadConfig({}));
    t.equal(offline.name, 'template-v1');
    t.equal((await offline.draft(input)).drafter, 'template-v1');

    const errors: unknown[] = [];
    const configured = createDrafter(
      loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'other-model', OPENAI_TIMEOUT_MS: '500' }),
      (e) => errors.push(e),
    );
    t.equal(configured.name, 'openai:other-model');
    server.set(answer(MODEL_BODY));
    t.equal((await configured.draft(input)).drafter, 'openai:other-model');
    t.equal(server.seen.at(-1)!.body.model, 'other-model');
    server.set(() => ({ status: 503, json: { error: { message: 'overloaded' } } }));
    t.equal((await configured.draft(input)).drafter, 'template-v1 (fallback from openai:other-model)');
    t.equal(errors.length, 1);
  });
});
