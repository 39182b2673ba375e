import t from 'tap';
import { completion, fakeOpenAi, isTriageCall } from '../helpers/fakeOpenAi.ts';
import { startAgentHarness } from './helpers.ts';

/**
 * The agent stamps a decision when it records it, after the model's calls: stamped when the dispatch
 * was taken up, a reply was listed before the prospect's message that arrived while the model
 * answered (and the conversation's lastMessageAt went back).
 */
t.test("a decision is stamped after its model call, not when the dispatch was taken up", async (t) => {
  const model = await fakeOpenAi(t);
  model.set((_req, body) => {
    if (!isTriageCall(body)) return { status: 500, json: { error: { message: 'only triage here' } } };
    return { status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['test'] })), delayMs: 1_500 };
  });
  const a = await startAgentHarness({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_TIMEOUT_MS: '20000' } });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch({ messageId: '<stamp-1@prospect.test>' });
  const ingested = (await a.h.app.services.events.readAll({ limit: 100_000 })).find((e) => e.type === 'MessageIngested') as { data: { occurredAt: number } };
  const triaged = await a.waitForEvent(conversationIds[0]!, 'AgentTriaged', 20_000);
  t.ok(triaged.data.occurredAt - ingested.data.occurredAt >= 1_500, `stamped ${triaged.data.occurredAt - ingested.data.occurredAt} ms after the pitch (the model took 1,500)`);
});
