import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { startTestApp } from '../helpers/testApp.ts';

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
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const mailbox = await startForwardingMailbox(app.services, {
    host: '127.0.0.1',
    port: 0,
    mailDomain: 'inbound.test',
    maxMessageBytes: 1024 * 1024,
    limits: { maxClients: 10, maxClientsPerAddress: 2 },
  });
  t.teardown(() => mailbox.close());
  const flood: Socket[] = [];
  t.teardown(() => flood.forEach((s) => s.destroy()));
  for (let i = 0; i < 10; i++) flood.push(connect(mailbox.port, '127.0.0.1')); // one address, 10 at once
  await Promise.all(flood.map((s) => new Promise((r) => s.once('connect', r))));
  const other = connect({ port: mailbox.port, host: '127.0.0.1', localAddress: '127.0.0.2' }); // another sender
  t.teardown(() => other.destroy());
  const line = await firstLine(other);
  t.match(line, /^220 /, `another address is greeted while the first holds its 2 (got: ${line})`);
});
