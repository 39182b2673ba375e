import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startMailboxApp } from './helpers.ts';
import { RawSmtp } from './rawSmtp.ts';

/**
 * SMTP_MAX_CLIENTS_PER_ADDRESS is counted when TCP accepts a connection: counted in smtp-server's
 * onConnect (after its early-talker delay and a reverse DNS lookup of up to 1.5 s in the sender's own
 * zone), one address opening connections in a loop held every SMTP_MAX_CLIENTS slot meanwhile, and
 * every other sender got 421 "Too many connected clients".
 */
const firstLine = (socket: Socket) =>
  new Promise<string>((resolve, reject) => {
    let buf = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      buf += d;
      const i = buf.indexOf('\r\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    socket.once('error', reject);
  });

t.test('one address cannot take every SMTP_MAX_CLIENTS slot', async (t) => {
  const { mailbox } = await startMailboxApp(t, { limits: { maxClients: 10, maxClientsPerAddress: 2 } });
  const flood: Socket[] = [];
  t.teardown(() => flood.forEach((s) => s.destroy()));
  for (let i = 0; i < 10; i++) flood.push(connect(mailbox.port, '127.0.0.1')); // one address, 10 at once
  await Promise.all(flood.map((s) => new Promise((r) => s.once('connect', r))));
  const other = connect({ port: mailbox.port, host: '127.0.0.1', localAddress: '127.0.0.2' }); // another sender
  t.teardown(() => other.destroy());
  const line = await firstLine(other);
  t.match(line, /^220 /, `another address is greeted while the first holds its 2 (got: ${line})`);
});

t.test('with every slot held, a sender holding fewer takes the oldest connection of the one holding the most', async (t) => {
  const { mailbox } = await startMailboxApp(t, { limits: { maxClients: 4, maxClientsPerAddress: 2 } });
  const opened: RawSmtp[] = [];
  t.teardown(() => opened.forEach((s) => s.close()));
  const open = async (localAddress: string) => {
    const s = await RawSmtp.open(mailbox.port, localAddress);
    opened.push(s);
    return s;
  };
  /** The lines a connection is sent until it is closed. */
  const untilClosed = (s: RawSmtp) =>
    new Promise<string[]>((resolve) => {
      const lines: string[] = [];
      s.socket.on('data', (d: string) => lines.push(...d.split('\r\n').filter(Boolean)));
      s.socket.once('close', () => resolve(lines));
    });

  // Two senders keep every slot busy, as a flood of NOOPs would.
  const [a1, a2] = [await open('127.0.0.2'), await open('127.0.0.2')];
  const [b1, b2] = [await open('127.0.0.3'), await open('127.0.0.3')];
  for (const s of [a1!, a2!, b1!, b2!]) t.match(await s.cmd('NOOP'), /^250/);
  const a1Closed = untilClosed(a1!);

  const c = await open('127.0.0.4');
  if (!t.match(c.greeted, /^220 /, 'a third sender is greeted')) return;
  t.match(await c.cmd('EHLO c.example'), /^250/, 'and served');
  t.match((await a1Closed).join('\n'), /421 4\.7\.0 the mailbox is full/, "the first sender's oldest connection was told why");
  t.match(await a2!.cmd('NOOP'), /^250/, 'its other connection goes on');

  const b1Closed = untilClosed(b1!);
  const d = await open('127.0.0.5');
  if (!t.match(d.greeted, /^220 /, 'a fourth sender takes a slot of the second')) return;
  t.match(await d.cmd('NOOP'), /^250/);
  await b1Closed;

  // Now every sender holds one: no one holds more than a fifth would.
  const refused = connect({ port: mailbox.port, host: '127.0.0.1', localAddress: '127.0.0.6' });
  t.teardown(() => refused.destroy());
  t.match(await firstLine(refused), /^421 4\.7\.0 too many connections/, 'a fifth sender is refused');
  t.match(await a2!.cmd('NOOP'), /^250/);
  t.match(await b2!.cmd('NOOP'), /^250/);
});
