/**
 * MCP `tools/call` of `list_agents` per second, against the REST `GET /api/v1/sites/{siteId}/agents`
 * answering the same body with the same OAuth access token, on the same service in the same run.
 *
 * 20 concurrent sessions each: an MCP session is the SDK's own Client over StreamableHTTPClientTransport
 * (stateless server: every call is one POST that builds a server and a transport, checks the token,
 * the scope, the site and the plan, and answers JSON); a REST session is a loop of fetch calls. Both
 * answer the six agents with their settings, the on-demand run allowance and the credit balance.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from '../test/mcp/helpers.ts';
import type { BenchResult } from './types.ts';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 5_000);
const SESSIONS = 20;

async function forDuration(ms: number, sessions: number, step: (session: number) => Promise<void>) {
  const end = performance.now() + ms;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: sessions }, async (_, session) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await step(session);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0;
  return { rate: latencies.length / (ms / 1000), p50: at(0.5), p99: at(0.99) };
}

export default async function run(): Promise<BenchResult> {
  const ctx = await startMcpApp();
  const clients: Client[] = [];
  try {
    const token = await obtainToken(ctx, { scope: 'agents:read' });
    for (let i = 0; i < SESSIONS; i++) clients.push(await connectWithToken(ctx.mcpUrl, token));
    const siteId = ctx.tenant.siteId;
    const restUrl = `${ctx.base}/api/v1/sites/${siteId}/agents`;
    let failures = 0;

    // Warm both paths (JIT, connection pools) before measuring.
    for (const client of clients) await client.callTool({ name: 'list_agents', arguments: { siteId } });
    await Promise.all(clients.map(() => fetch(restUrl, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer())));

    const rest = await forDuration(ROUND_MS, SESSIONS, async () => {
      const res = await fetch(restUrl, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { agents: unknown[] };
      if (res.status !== 200 || body.agents.length !== 6) failures++;
    });
    const mcp = await forDuration(ROUND_MS, SESSIONS, async (session) => {
      const answer = toolAnswer(await clients[session]!.callTool({ name: 'list_agents', arguments: { siteId } }));
      if (answer.isError || answer.body.agents.length !== 6) failures++;
    });
    const ratio = mcp.rate / rest.rate;
    return {
      name: 'MCP tools/call vs REST GET (list_agents)',
      figures: {
        'MCP tools/call/s': Math.round(mcp.rate),
        'MCP p50 ms': Number(mcp.p50.toFixed(2)),
        'MCP p99 ms': Number(mcp.p99.toFixed(2)),
        'REST GET/s (baseline)': Math.round(rest.rate),
        'REST p50 ms': Number(rest.p50.toFixed(2)),
        'REST p99 ms': Number(rest.p99.toFixed(2)),
        'failed calls': failures,
        'concurrent sessions': SESSIONS,
      },
      ratio,
      ratioLabel: 'MCP tools/call/s ÷ REST GET/s, same token, same answer',
      target: '≥ 50%',
      pass: ratio >= 0.5 && failures === 0,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await ctx.app.close();
  }
}
