import { type Socket, createSocket } from 'node:dgram';

/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP, port 0) that answers TXT queries from a table,
 * so a test can point node's resolver at it (DNS_SERVERS=127.0.0.1:<port>). Packets are encoded by hand
 * (RFC 1035 section 4): a name in the table answers its TXT records, a name absent from it NXDOMAIN,
 * any other query type an empty NOERROR. `failWith` turns every answer into an error code (2 SERVFAIL, 5 REFUSED).
 */
export interface DnsResponder {
  /** `127.0.0.1:<port>`, the form DNS_SERVERS and Resolver#setServers take. */
  server: string;
  port: number;
  /** Lower-case name → TXT records, each a list of character-strings (at most 255 bytes each). Mutable. */
  txt: Map<string, string[][]>;
  /** Every name asked, in order. */
  queries: string[];
  failWith(rcode: number | null): void;
  close(): Promise<void>;
}

const TYPE_TXT = 16;
const CLASS_IN = 1;

export async function startDnsResponder(records: Record<string, string[][]> = {}): Promise<DnsResponder> {
  const txt = new Map(Object.entries(records).map(([name, value]) => [name.toLowerCase(), value]));
  const queries: string[] = [];
  let failure: number | null = null;
  const socket: Socket = createSocket('udp4');
  socket.on('message', (packet, peer) => {
    let reply: Buffer;
    try {
      const query = parseQuery(packet);
      queries.push(query.name);
      reply = answer(packet, query, failure ?? undefined, txt.get(query.name.toLowerCase()));
    } catch {
      return; // not a DNS query we understand: drop it, as a server would
    }
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const port = socket.address().port;
  return {
    server: `127.0.0.1:${port}`,
    port,
    txt,
    queries,
    failWith(rcode) {
      failure = rcode;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

interface Query {
  name: string;
  type: number;
  /** Offset just past the question (name, type, class). */
  end: number;
}

function parseQuery(packet: Buffer): Query {
  if (packet.length < 12 || packet.readUInt16BE(4) !== 1) throw new Error('expected one question');
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = packet[offset]!;
    if (length === undefined || length > 63) throw new Error('bad label');
    offset += 1;
    if (length === 0) break;
    labels.push(packet.toString('latin1', offset, offset + length));
    offset += length;
  }
  const type = packet.readUInt16BE(offset);
  return { name: labels.join('.'), type, end: offset + 4 };
}

function answer(packet: Buffer, query: Query, failure: number | undefined, records: string[][] | undefined): Buffer {
  const rd = packet[2]! & 0x01;
  const rcode = failure ?? (records === undefined ? 3 /* NXDOMAIN */ : 0);
  const answers = rcode === 0 && query.type === TYPE_TXT ? records! : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(packet.readUInt16BE(0), 0); // id
  header[2] = 0x80 | 0x04 | rd; // QR, AA, RD as asked
  header[3] = rcode;
  header.writeUInt16BE(1, 4); // QDCOUNT
  header.writeUInt16BE(answers.length, 6); // ANCOUNT
  const question = packet.subarray(12, query.end);
  return Buffer.concat([header, question, ...answers.map(txtRecord)]);
}

function txtRecord(chunks: string[]): Buffer {
  const rdata = Buffer.concat(
    chunks.map((chunk) => {
      const bytes = Buffer.from(chunk, 'utf8');
      if (bytes.length > 255) throw new Error('a TXT character-string holds at most 255 bytes');
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    }),
  );
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0); // name: pointer to the question's name
  fixed.writeUInt16BE(TYPE_TXT, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(60, 6); // TTL
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}
