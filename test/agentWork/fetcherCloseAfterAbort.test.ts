import t from 'tap';
import { SafePageFetcher } from '../../src/adapters/http/safePageFetcher.ts';
import { parseAllowedRanges } from '../../src/domain/destination.ts';
import { startTarpit } from '../helpers/tarpit.ts';

/** A fetch returns at once on abort, and close() (runner.stop) does not wait for the TLS connect it had started either. */
t.test('after an aborted fetch to a TLS tarpit, close() does not wait for the connect timeout', async (t) => {
  const { port, held } = await startTarpit(t);
  const fetcher = new SafePageFetcher({ allowed: parseAllowedRanges('127.0.0.1/32'), timeoutMs: 5_000, maxBytes: 1000 });
  const stop = new AbortController();
  const started = Date.now();
  const fetching = fetcher.fetch(`https://127.0.0.1:${port}/`, { signal: stop.signal }).catch((e: Error) => e.message);
  setTimeout(() => stop.abort(), 200);
  t.comment(`fetch: ${await fetching} after ${Date.now() - started} ms`);
  const closing = Date.now();
  await fetcher.close();
  const took = Date.now() - closing;
  t.ok(took < 1_000, `close() took ${took} ms`);
  t.equal(held.filter((s) => !s.destroyed).length, held.length, `sockets the tarpit still holds open: ${held.length}`);
});
