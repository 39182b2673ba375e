/**
 * POST /oauth/token with grant_type=refresh_token, per second, against an authenticated API read
 * (GET the site's webhook subscriptions with an API key) on the same service in the same run.
 *
 * A refresh authenticates the client from its event stream, decides on the grant's stream (SHA-256
 * of the presented token, no scrypt), appends three events with the expected revision (durable) and
 * waits until the token lookup read model has them, so the new access token works on the next call.
 * The read is one API-key lookup plus one read-model query. Both run 16 chains concurrently: each
 * refresh chain presents the refresh token its previous call returned (refresh tokens are single-use).
 */
import { performance } from 'node:perf_hooks';
import { Browser, obtainCode, registerClient, startOAuthApp, tokenRequest } from '../test/oauth/helpers.ts';
import type { BenchResult } from './types.ts';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 3_000);
const CHAINS = 16;

async function forDuration(ms: number, chains: number, step: (chain: number) => Promise<void>) {
  const end = performance.now() + ms;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: chains }, async (_, chain) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await step(chain);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / (ms / 1000), p50: latencies[Math.floor(latencies.length / 2)] ?? 0, p95: latencies[Math.floor(latencies.length * 0.95)] ?? 0 };
}

export default async function run(): Promise<BenchResult> {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  try {
    const browser = new Browser(issuer);
    await browser.signIn(ownerEmail);
    const client = await registerClient(app, tenant, 'none');
    const refreshTokens: string[] = [];
    for (let i = 0; i < CHAINS; i++) {
      const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
      const r = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier });
      refreshTokens.push(r.json.refresh_token as string);
    }
    let failures = 0;
    const readUrl = `${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`;
    const baseline = await forDuration(ROUND_MS, CHAINS, async () => {
      const res = await fetch(readUrl, { headers: { authorization: `Bearer ${tenant.key}` } });
      await res.arrayBuffer();
      if (res.status !== 200) failures++;
    });
    const refresh = await forDuration(ROUND_MS, CHAINS, async (chain) => {
      const r = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: refreshTokens[chain]! });
      if (r.status !== 200) {
        failures++;
        return;
      }
      refreshTokens[chain] = r.json.refresh_token as string;
    });
    const ratio = refresh.rate / baseline.rate;
    return {
      name: 'OAuth refresh-token grant',
      figures: {
        'refresh grants/s': Math.round(refresh.rate),
        'refresh p50 ms': Number(refresh.p50.toFixed(2)),
        'refresh p95 ms': Number(refresh.p95.toFixed(2)),
        'API-key reads/s (baseline)': Math.round(baseline.rate),
        'read p50 ms': Number(baseline.p50.toFixed(2)),
        'failed requests': failures,
        'concurrent chains': CHAINS,
      },
      ratio,
      ratioLabel: 'refresh grants/s ÷ authenticated API reads/s',
      target: '≥ 20% (a durable, race-safe rotation at a fifth of a cached read)',
      pass: ratio >= 0.2 && failures === 0,
    };
  } finally {
    await app.close();
  }
}
