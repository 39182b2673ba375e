import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import t from 'tap';
import { SmtpMailer } from '../../src/adapters/mail/smtpMailer.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startAgentHarness } from './helpers.ts';

/**
 * The relay takes the whole reply but its 250 comes after the mailer's socket timeout. A retry would
 * give the prospect the same reply twice: the attempt is recorded as outcome_unknown (permanent) and
 * the conversation waits for a person, as after a crash between send and record.
 */
t.test("a relay's 250 lost to a timeout: the prospect gets the reply once, and a person is asked", async (t) => {
  const accepted: string[] = [];
  const relay = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    authOptional: true,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        accepted.push(/^Message-ID: (.*)$/im.exec(Buffer.concat(chunks).toString())?.[1] ?? '?');
        setTimeout(() => callback(null), accepted.length === 1 ? 1_500 : 0);
      });
    },
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => relay.close(() => r())));
  const a = await startAgentHarness({ startAgent: false, env: { AGENT_RETRY_BASE_MS: '200' } });
  t.teardown(() => a.close());
  const mailer = new SmtpMailer(`smtp://127.0.0.1:${(relay.server.address() as AddressInfo).port}`, { socketTimeoutMs: 500 });
  t.teardown(() => mailer.close());
  a.agent = await startAgentWorker(a.h.app.services, undefined, { mailer });
  const id = (await a.pitch()).conversationIds[0]!;
  const failed = await a.waitForEvent(id, 'ReplySendFailed', 15_000);
  t.match(failed.data, { permanent: true, retryAt: null, error: /^outcome_unknown: / });
  const status = await a.waitForEvent(id, 'ConversationStatusChanged', 5_000);
  t.match(status.data, { newStatus: 'awaiting_human', resolutionOutcome: 'send_failed' });
  await new Promise((r) => setTimeout(r, 1_000));
  t.equal(accepted.length, 1, 'exactly once towards the prospect');
  t.notOk((await a.conversationEvents(id)).some((e) => e.type === 'ReplySent'));
});
