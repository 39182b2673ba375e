import nodemailer from 'nodemailer';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { PITCH, eventsOfType } from '../ingestion/helpers.ts';
import { settle } from '../helpers/http.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { startAgentHarness, waitFor } from './helpers.ts';

/**
 * A team member forwards a pitch to the site's forwarding address. The ids in that mail's headers
 * are the forward's and the team's internal thread, which the prospect never saw: the agent's reply
 * starts the prospect's thread instead of naming them. They still thread a later forward.
 */
t.test("the agent's reply to a forwarded pitch names none of the forward's ids; a later forward still joins the conversation", async (t) => {
  const a = await startAgentHarness({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => a.close());
  const mailbox = await startForwardingMailbox(a.h.app.services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024 });
  t.teardown(() => mailbox.close());
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  const forward = (messageId: string, references: string[], body: string) =>
    transport.sendMail({
      from: 'Owner <owner@example.test>',
      to: a.h.tenant.forwardingAddress,
      subject: `Fwd: ${PITCH.subject}`,
      messageId,
      references,
      inReplyTo: references.at(-1),
      text: `FYI\n\n---------- Forwarded message ---------\nFrom: Jane Prospect <jane@prospect.io>\nSubject: ${PITCH.subject}\n\n${body}`,
    });

  await forward('<fwd-internal-1@mail.example.test>', ['<internal-thread-root@mail.example.test>'], PITCH.bodyText);
  const mail = await waitFor('the reply', async () => a.sink.received[0]);
  t.same(mail.rcptTo, ['jane@prospect.io']);
  t.equal(mail.parsed.inReplyTo, undefined, "no In-Reply-To: the prospect never received the team member's forward");
  t.equal(mail.parsed.references, undefined, "no References: the team's internal thread stays internal");
  t.notMatch(mail.raw.toString(), /mail\.example\.test/, 'no internal id anywhere in the mail');
  t.equal(mail.parsed.subject, `Re: ${PITCH.subject}`);

  const [first] = await eventsOfType(a.h.app.services, 'MessageIngested');
  const conversationId = (first!.data as { conversationIds: string[] }).conversationIds[0]!;
  await a.waitForEvent(conversationId, 'ReplySent');
  await settle(a.h.app.services);
  t.equal((await act(a.h.app.fastify, a.h.tenant, conversationId, 'reply', { text: 'Adding to my colleague: next week works.' })).statusCode, 201);
  const followUp = await waitFor("the person's follow-up", async () => a.sink.received[1]);
  t.equal(followUp.parsed.inReplyTo, mail.parsed.messageId, "a person's follow-up threads onto the agent's reply, the mail the prospect got");
  t.notMatch(followUp.raw.toString(), /mail\.example\.test/);

  t.match(first!.data, { forwarded: true, externalMessageId: 'fwd-internal-1@mail.example.test' }, 'the forward is recorded as such, with its id');
  await forward('<fwd-internal-2@mail.example.test>', ['<internal-thread-root@mail.example.test>', '<fwd-internal-1@mail.example.test>'], 'Any news on this?');
  const second = (await eventsOfType(a.h.app.services, 'MessageIngested')).at(-1)!.data as { threaded: boolean; conversationIds: string[] };
  t.equal(second.threaded, true, "the team member's next forward in the same thread joins the conversation");
  t.same(second.conversationIds, (first!.data as { conversationIds: string[] }).conversationIds);
});
