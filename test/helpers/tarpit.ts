import { createServer, type Socket } from 'node:net';
import type { Test } from 'tap';

/** A TCP listener on loopback that accepts connections and never answers (a TLS handshake never completes); closed at the test's end. Resolves with its port. */
export async function startTarpit(t: Test): Promise<{ port: number; held: Socket[] }> {
  const held: Socket[] = [];
  const tarpit = createServer((s) => held.push(s));
  await new Promise<void>((r) => tarpit.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    held.forEach((s) => s.destroy());
    tarpit.close();
  });
  return { port: (tarpit.address() as { port: number }).port, held };
}
