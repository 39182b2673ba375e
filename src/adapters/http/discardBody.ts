import type { Readable } from 'node:stream';

/** Drops an answer's body unread (a peer trickling it must not hold the socket); an error it emits afterwards is ignored. */
export function discardBody(body: Readable): void {
  body.on('error', () => {}).destroy();
}
