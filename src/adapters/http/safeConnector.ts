import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { type BlockList, isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { buildConnector } from 'undici';
import { REASON_PHRASES, refusalReason } from '../../domain/destination.ts';

export class BlockedDestinationError extends Error {
  override readonly name = 'BlockedDestinationError';
  readonly code = 'BLOCKED_DESTINATION';
}

export interface SafeConnectorOptions {
  /** Operator-allowed ranges (WEBHOOK_ALLOWED_RANGES). */
  allowed: BlockList;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCa?: string;
  /** Connect timeout (TCP and TLS). */
  timeoutMs: number;
}


/**
 * An undici connector for outbound HTTPS to addresses outside the service's own networks (webhook
 * deliveries, the agents' page fetches, OAuth client metadata documents). The destination check
 * runs twice on every new connection: in `lookup` on every address DNS returns, and on the
 * socket's actual remote address once connected, so neither DNS rebinding nor a literal address
 * can slip through. Only https.
 */
export function safeConnector(options: SafeConnectorOptions): buildConnector.connector {
  const allowed = options.allowed;
  const safeLookup = (hostname: string, opts: LookupOptions, callback: (...args: any[]) => void) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      for (const a of addresses) {
        const reason = refusalReason(a.address, allowed);
        if (reason) return callback(new BlockedDestinationError(`${hostname} resolves to ${REASON_PHRASES[reason]}`));
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      if (opts.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const base = buildConnector({
    // One secure context for every connection: parsing the CA bundle per handshake is costly.
    ...(options.extraCa ? { secureContext: createSecureContext({ ca: [...rootCertificates, options.extraCa] }) } : {}),
    lookup: safeLookup,
    keepAlive: true,
    timeout: options.timeoutMs,
  } as buildConnector.BuildOptions);
  return (opts, callback) => {
    if (opts.protocol !== 'https:') {
      callback(new BlockedDestinationError('only https destinations are allowed'), null);
      return;
    }
    // A literal address is judged before any packet is sent; names are judged in lookup and below.
    const literal = opts.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0) {
      const reason = refusalReason(literal, allowed);
      if (reason) {
        callback(new BlockedDestinationError(`destination is ${REASON_PHRASES[reason]}`), null);
        return;
      }
    }
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      const address = socket.remoteAddress;
      const reason = address ? refusalReason(address, allowed) : 'unspecified';
      if (reason) {
        socket.destroy();
        return callback(new BlockedDestinationError(`connected address is ${REASON_PHRASES[reason]}`), null);
      }
      callback(null, socket);
    });
  };
}
