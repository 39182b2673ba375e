import t from 'tap';
import { classify, ownText } from '../../src/adapters/triage/offlineTriage.ts';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import { getMessage } from '../../src/readModels/messages.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { RawSmtp } from '../ingestion/rawSmtp.ts';

/**
 * An HTML-only mail's text is derived in one linear pass (htmlToText, mail mode): a <blockquote>'s
 * paragraphs are quoted with "> " as mailparser's converter did, so the offline triage (ownText) still
 * tells quoted history from the sender's words when no attribution line it knows precedes it (Dutch
 * "schreef", Portuguese "escreveu", none): "Thanks, sounds great!" on a thread is accepted.
 */
const quoted =
  'Hi Jan, thanks for your message about our guide to home espresso. We would be happy to consider adding your resource. Could you tell us more about the page, who wrote it and how often it is updated? Best regards, the Home Coffee team';

t.test('an HTML-only reply: the quoted thread (blockquote) is still recognisable as quoted', async (t) => {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const mailbox = await startForwardingMailbox(app.services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024 });
  t.teardown(() => mailbox.close());
  const smtp = await RawSmtp.open(mailbox.port);
  t.teardown(() => smtp.close());
  await smtp.cmd('EHLO sender.test');
  await smtp.cmd('MAIL FROM:<jan@prospect.example>');
  t.match(await smtp.cmd(`RCPT TO:<${tenant.forwardingAddress}>`), /^250/);
  t.match(await smtp.cmd('DATA'), /^354/);
  const html =
    '<div dir="ltr">Thanks, sounds great!</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">Op ma 1 jan 2024 om 10:00 schreef Home Coffee &lt;<a href="mailto:outreach@site.example">outreach@site.example</a>&gt;:<br></div>' +
    `<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">${quoted}</blockquote></div>`;
  const end = smtp.reply();
  await smtp.write(`From: Jan <jan@prospect.example>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Re: Your guide\r\nMessage-ID: <q1@prospect.example>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n.\r\n`);
  t.match(await end, /^250 /);
  await app.services.projections.waitFor(await app.services.events.headPosition(), 10_000);
  const ingested = (await app.services.events.readAll({ limit: 10_000 })).find((e) => e.type === 'MessageIngested')!.data as { messageId: string };
  const message = await getMessage(app.services.readModels, ingested.messageId);
  t.comment(message!.bodyText);
  t.notOk(ownText(message!.bodyText).includes('Best regards, the Home Coffee team'), 'the quoted thread is not the sender\'s own text');
  const decision = classify({ subject: 'Re: Your guide', bodyText: message!.bodyText, from: 'jan@prospect.example', fromName: null, siteDomain: 'example.test', isReply: true, ask: null });
  t.equal(decision.outcome, 'accept', `a short thanks on the thread is accepted, (got: ${JSON.stringify(decision)})`);
});
