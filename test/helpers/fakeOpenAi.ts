import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export type Behaviour = (req: IncomingMessage, body: Record<string, unknown>) => { status: number; json?: unknown; delayMs?: number };

/** A local HTTP server answering /v1/chat/completions the way the OpenAI API does; the real SDK talks to it. */
export async function fakeOpenAi(t: Test) {
  const seen: Array<{ path: string; auth: string | undefined; body: Record<string, unknown> }> = [];
  let behaviour: Behaviour = () => ({ status: 500, json: { error: { message: 'not set' } } });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      const answer = behaviour(req, body);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.json ?? {}));
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    seen,
    set(b: Behaviour) { behaviour = b; },
  };
}

export const completion = (content: string) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'test-model',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
  usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
});

/** The message the model received as the user turn. */
export function userPrompt(body: Record<string, unknown>): string {
  const messages = body.messages as Array<{ role: string; content: string }>;
  return messages.find((m) => m.role === 'user')?.content ?? '';
}

/** Whether a request asks for the agent's triage (the ingestions' link extraction asks the model too). */
export function isTriageCall(body: Record<string, unknown>): boolean {
  return (body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === 'triage_decision';
}
