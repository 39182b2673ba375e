import nodemailer from 'nodemailer';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { EventTooLargeError } from '../../src/ports/eventStore.ts';
import { expectError } from '../helpers/http.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, eventsOfType, ingest } from './helpers.ts';

/**
 * An event store with a size limit per append (EventStoreDB's MaxAppendSize) refuses a large
 * message for good: REST answers 400 (not a 503 to retry forever) and the forwarding mailbox 552
 * (not 451, which makes the sending server retry for days). Stands for it: a store that refuses
 * every append holding a MessageIngested larger than 10 KiB.
 */
t.test('an ingestion larger than the event store takes: 400 on REST, 552 on SMTP, nothing stored', async (t) => {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const store = app.services.events;
  const append = store.append.bind(store);
  store.append = async (streamId, events, expected) => {
    if (events.some((e) => e.type === 'MessageIngested') && JSON.stringify(events).length > 10_240) throw new EventTooLargeError(streamId, 10_240);
    return append(streamId, events, expected);
  };
  const big = 'x'.repeat(20_000);

  expectError(t, await ingest(app.fastify, tenant, { ...PITCH, bodyText: big }), 400, 'VALIDATION_ERROR', 'REST');
  t.equal((await ingest(app.fastify, tenant, PITCH)).statusCode, 201, 'a message of ordinary size still goes in');

  const mailbox = await startForwardingMailbox(app.services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024 });
  t.teardown(() => mailbox.close());
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  const refused = await transport.sendMail({ from: 'jane@prospect.io', to: tenant.forwardingAddress, subject: 'big', text: big }).then(
    () => null,
    (error: { responseCode?: number }) => error,
  );
  t.equal(refused?.responseCode, 552, 'SMTP: permanent refusal, the sender does not retry');
  t.equal((await eventsOfType(app.services, 'MessageIngested')).length, 1, 'only the ordinary message is stored');
});
