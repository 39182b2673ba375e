import { isIP } from 'node:net';

/**
 * What a per-client limit counts a client by: its IPv4 address, or for IPv6 its /64 (one host
 * commonly holds a whole /64, and a new address from it each time must not be a new client). An
 * IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) address is its IPv4 client.
 */
export function clientGroup(ip: string): string {
  const bare = ip.split('%')[0]!; // a zone id names an interface, not a client
  if (isIP(bare) !== 6) return bare;
  // The URL parser writes the address canonically: lower case, `::` once, an IPv4 tail as two groups.
  const host = new URL(`http://[${bare}]`).hostname.slice(1, -1);
  const [head = '', tail = ''] = host.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = (host.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left).map((g) => parseInt(g, 16));
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (mapped || nat64) return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.');
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
