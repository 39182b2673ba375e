import t from 'tap';
import { SmtpMailer } from '../../src/adapters/mail/smtpMailer.ts';
import { ReplySender } from '../../src/processors/agent/replySender.ts';
import { startSmtpSink } from './smtpSink.ts';
import { storeAndOutbox } from './helpers.ts';

/**
 * Each reply waiting for one of the relay's connections listens for the sender's stop: more than ten
 * of them is a busy relay, and Node warned of a listener leak (MaxListenersExceededWarning).
 */
t.test('twenty replies waiting for a connection: no listener-leak warning, and a stop ends every wait', async (t) => {
  const { events } = storeAndOutbox(t);
  const sink = await startSmtpSink({});
  t.teardown(() => sink.close());
  const mailer = new SmtpMailer(sink.url, { maxConnections: 1 });
  t.teardown(() => mailer.close());
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  const held = await mailer.reserve();
  const deps = { events, readModels: null as never, clock: { now: () => new Date() }, secrets: null as never, newId: () => 'x', fromLocalPart: 'outreach', mailDomain: 'mail.test', mailer };
  const sender = new ReplySender(deps, { maxAttempts: 3, baseMs: 1_000, factor: 1, orphanAfterMs: 300_000 }, { workerId: 'w', instanceId: 'w/1' });
  for (let i = 0; i < 20; i++) sender.sendDrafted({ conversationId: `c${i}`, siteId: 's1', teamId: 't1' }, `m${i}`);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(mailer.waitingForConnection, 20, 'every reply waits for the one connection');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(warnings.map((w) => w.name), [], 'no warning');
  await sender.stop();
  t.equal(mailer.waitingForConnection, 0, 'the stop ended every wait');
  held?.();
});
