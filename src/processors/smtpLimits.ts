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
 * Connections from one address, counted when TCP accepts them (before smtp-server greets, counts them
 * against maxClients, or runs onConnect): one sender opening connections in a loop must not hold
 * every slot while each waits to be refused. Over the limit, a 421 and the socket is closed. An IPv6
 * /64 counts as one address, as the parse queue counts it: one host commonly holds a whole /64.
 */
export function limitPerAddress(server: SMTPServer, max: number): void {
  const open = new Map<string, number>();
  const listeners = server.server.listeners('connection') as Array<(socket: Socket) => void>;
  server.server.removeAllListeners('connection');
  server.server.on('connection', (socket: Socket) => {
    const address = clientGroup(socket.remoteAddress ?? '');
    const count = open.get(address) ?? 0;
    if (count >= max) {
      socket.on('error', () => {});
      socket.end('421 4.7.0 too many connections from your address, try again later\r\n');
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
    for (const listener of listeners) listener.call(server.server, socket);
  });
}
