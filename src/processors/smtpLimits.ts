import type { Socket } from 'node:net';
import type { SMTPServer } from 'smtp-server';
import { clientGroup } from '../lib/clientGroup.ts';

/** What one sender may hold of the forwarding mailbox, which every tenant shares (config: SMTP_MAX_CLIENTS and the rest). */
export interface SmtpLimits {
  /** Connections at once, from anyone. */
  maxClients: number;
  /** Connections at once from one address (an IPv6 /64 is one: `clientGroup`). */
  maxClientsPerAddress: number;
  /** A connection idle this long is closed. */
  socketTimeoutMs: number;
  /** RCPT TO per message. */
  maxRecipients: number;
}

export const SMTP_LIMITS: SmtpLimits = { maxClients: 100, maxClientsPerAddress: 10, socketTimeoutMs: 60_000, maxRecipients: 50 };

/**
 * Who holds the mailbox's connections, counted when TCP accepts them (before smtp-server greets or
 * runs onConnect): one sender opening connections in a loop must not hold every slot while each
 * waits to be refused. A sender is an address; an IPv6 /64 counts as one, as the parse queue counts
 * it (one host commonly holds a whole /64).
 * - One sender holds `maxClientsPerAddress` at most: beyond, a 421 and the socket is closed.
 * - `maxClients` in all. When every slot is held, a sender that would then hold fewer than the
 *   sender holding the most takes that sender's oldest connection, which is told 421 and closed:
 *   a few addresses keeping connections busy (NOOP every few seconds is never idle) cannot shut
 *   everyone else out. When no sender holds more, the newcomer gets the 421.
 * An MTA retries a 421 later (RFC 5321 §4.2.2), a message cut short included.
 */
export function shareConnections(server: SMTPServer, limits: Pick<SmtpLimits, 'maxClients' | 'maxClientsPerAddress'>): void {
  // Per sender, its connections oldest first (a Set keeps insertion order).
  const held = new Map<string, Set<Socket>>();
  let total = 0;
  const release = (address: string, socket: Socket) => {
    const sockets = held.get(address);
    if (!sockets?.delete(socket)) return;
    total--;
    if (sockets.size === 0) held.delete(address);
  };
  const listeners = server.server.listeners('connection') as Array<(socket: Socket) => void>;
  server.server.removeAllListeners('connection');
  server.server.on('connection', (socket: Socket) => {
    const address = clientGroup(socket.remoteAddress ?? '');
    const own = held.get(address)?.size ?? 0;
    if (own >= limits.maxClientsPerAddress) return closeWith(socket, '421 4.7.0 too many connections from your address, try again later');
    if (total >= limits.maxClients) {
      const [biggest, sockets] = mostHeld(held);
      if (sockets.size <= own + 1) return closeWith(socket, '421 4.7.0 too many connections, try again later');
      const oldest = sockets.values().next().value!;
      release(biggest, oldest);
      closeWith(oldest, '421 4.7.0 the mailbox is full and your address holds the most connections, try again later');
    }
    let sockets = held.get(address);
    if (!sockets) held.set(address, (sockets = new Set()));
    sockets.add(socket);
    total++;
    socket.once('close', () => release(address, socket));
    for (const listener of listeners) listener.call(server.server, socket);
  });
}

function mostHeld(held: Map<string, Set<Socket>>): [string, Set<Socket>] {
  let most: [string, Set<Socket>] | null = null;
  for (const entry of held) if (!most || entry[1].size > most[1].size) most = entry;
  return most!;
}

/** Says why and closes the socket once that is written (a connection smtp-server serves is no longer read: nothing it sends after is taken). */
function closeWith(socket: Socket, reply: string): void {
  socket.on('error', () => {});
  socket.end(`${reply}\r\n`, () => socket.destroy());
  setTimeout(() => socket.destroy(), 1_000).unref();
}
