import { Resolver } from 'node:dns/promises';
import type { DnsResolver } from '../../ports/dnsResolver.ts';

/** Answers meaning "no such record" rather than "could not ask". */
const NO_RECORD_CODES = new Set(['ENOTFOUND', 'ENODATA']);

export interface NodeDnsResolverOptions {
  /** `ip` or `ip:port` (`[ipv6]:port`); unset: the system's resolvers. */
  servers?: string[];
  /** Per-try timeout in milliseconds. */
  timeoutMs?: number;
  tries?: number;
}

/** The DnsResolver port on node's own resolver (c-ares), optionally pointed at given servers (DNS_SERVERS). */
export function createNodeDnsResolver(options: NodeDnsResolverOptions = {}): DnsResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
  if (options.servers?.length) resolver.setServers(options.servers);
  return {
    async resolveTxt(name) {
      try {
        return await resolver.resolveTxt(name);
      } catch (error) {
        if (NO_RECORD_CODES.has((error as NodeJS.ErrnoException).code ?? '')) return [];
        throw error;
      }
    },
  };
}
