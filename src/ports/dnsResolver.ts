/**
 * Looks up DNS TXT records. One record is a list of character-strings (chunks of at most 255 bytes),
 * as node's `resolveTxt` returns them. A name that does not exist or has no TXT records resolves to
 * an empty list; any other failure (server failure, refusal, timeout) rejects.
 */
export interface DnsResolver {
  resolveTxt(name: string): Promise<string[][]>;
}
