import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { AesSecretBox } from '../../src/adapters/crypto/aesSecretBox.ts';
import { bounceAddress, bouncedMessageId } from '../../src/domain/bounceAddress.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { envelopes, startMailboxHarness } from './helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/deliveryReports/${name}`, import.meta.url));

t.test('a bounce address names its mail, and only the service can make one', async (t) => {
  const box = new AesSecretBox(randomBytes(32));
  const address = bounceAddress(box, '01JD5Q8W6ZB4X0K3M9T2C7V1NE', 'Inbound.Test');
  t.match(address, /^bounce\+01jd5q8w6zb4x0k3m9t2c7v1ne\.[0-9a-f]{24}@inbound\.test$/);
  t.ok(address.split('@')[0]!.length <= 64, 'a local part fits RFC 5321 §4.5.3.1.1');
  t.equal(bouncedMessageId(box, address, 'inbound.test'), '01JD5Q8W6ZB4X0K3M9T2C7V1NE');
  t.equal(bouncedMessageId(box, address.toUpperCase(), 'inbound.test'), '01JD5Q8W6ZB4X0K3M9T2C7V1NE', 'a relay that changes case does not matter');
  t.equal(bouncedMessageId(box, ` ${address} `, 'inbound.test'), '01JD5Q8W6ZB4X0K3M9T2C7V1NE');

  const tag = address.split('.')[1]!.split('@')[0]!;
  t.equal(bouncedMessageId(box, `bounce+01jd5q8w6zb4x0k3m9t2c7v1nf.${tag}@inbound.test`, 'inbound.test'), null, "another mail's id under this tag");
  t.equal(bouncedMessageId(new AesSecretBox(randomBytes(32)), address, 'inbound.test'), null, 'another key');
  t.equal(bouncedMessageId(box, address.replace('@inbound.test', '@other.test'), 'inbound.test'), null, 'another domain');
  t.equal(bouncedMessageId(box, address.replace(/\.[0-9a-f]{24}@/, `.${'0'.repeat(24)}@`), 'inbound.test'), null, 'a made-up tag');
  t.equal(bouncedMessageId(box, address.replace(/[0-9a-f]@/, '@'), 'inbound.test'), null, 'a shortened tag');
  t.equal(bouncedMessageId(box, 'forward+abc123@inbound.test', 'inbound.test'), null, 'a forwarding address');
  t.not(bounceAddress(box, 'A', 'x.test'), bounceAddress(box, 'B', 'x.test'));
});

/**
 * Every mail the service sends (the agent's replies, a person's replies) leaves from its own bounce
 * address, not the site's forwarding address; a delivery report sent there suppresses that mail's
 * recipient even when it returns no copy of the mail; an answer that is not a report is dropped;
 * a bounce address with a tag the service did not make is refused at RCPT TO.
 */
t.test('delivery reports sent to a mail’s own bounce address, through a real SMTP client', async (t) => {
  const { a, services, transport } = await startMailboxHarness(t);

  const bounceOf = new Map<string, string>();
  const conversations = new Map<string, string>();
  for (const from of ['jane.doe@prospect.test', 'priya.shah@yahoo.test', 'omar@news.test']) {
    const conversationId = (await ingest(a.h.app.fastify, a.h.tenant, { ...PITCH, from })).json().conversationIds[0];
    conversations.set(from, conversationId);
    await a.waitForEvent(conversationId, 'ReplySent');
    const mail = a.sink.received.find((m) => m.rcptTo.includes(from))!;
    t.match(mail.mailFrom, /^bounce\+[0-9a-z]{26}\.[0-9a-f]{24}@inbound\.test$/, `the agent's reply to ${from} leaves from its own bounce address`);
    t.notOk(mail.raw.includes(a.h.tenant.forwardingAddress.split('@')[0]!), 'the forwarding address is nowhere in the mail');
    const drafted = (await a.conversationEvents(conversationId)).find((e) => e.type === 'ReplyDrafted')!;
    t.equal(drafted.data.returnPath, mail.mailFrom, 'the Return-Path is recorded with the draft');
    bounceOf.set(from, mail.mailFrom);
  }
  t.equal(new Set(bounceOf.values()).size, 3, 'one address per mail');

  // A person's reply too.
  const sentBefore = a.sink.received.length;
  t.equal((await act(a.h.app.fastify, a.h.tenant, conversations.get('omar@news.test')!, 'reply', { text: 'One more thing.' })).statusCode, 201);
  const personal = a.sink.received[sentBefore]!;
  t.match(personal.mailFrom, /^bounce\+[0-9a-z]{26}\.[0-9a-f]{24}@inbound\.test$/, "a person's reply leaves from its own bounce address");
  t.not(personal.mailFrom, bounceOf.get('omar@news.test'));

  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  const all = async () => services.events.readAll({ limit: 100_000 });
  const ingestedBefore = (await all()).filter((e) => e.type === 'MessageIngested').length;
  const suppressed = async () => (await all()).filter((e) => e.type === 'ContactSuppressed').map((e) => (e.data as { email: string }).email);

  // A bounce that returns nothing of ours and names another address (the recipient's server had
  // forwarded it): sent to Jane's mail's bounce address, it is about Jane's mail.
  await transport.sendMail({ envelope: { from: '', to: [bounceOf.get('jane.doe@prospect.test')!] }, raw: fixture('gmail-no-such-user.eml') });
  // A complaint about Priya's mail.
  await transport.sendMail({ envelope: { from: '', to: [bounceOf.get('priya.shah@yahoo.test')!] }, raw: fixture('yahoo-arf-abuse.eml') });
  await a.receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.contact_suppressed').length === 2, 10_000);
  t.same(
    envelopes(a.receiver, 'outreach.contact_suppressed').map((e) => e.data),
    [
      { email: 'jane.doe@prospect.test', reason: 'bounced', source: 'bounce', upgraded: false },
      { email: 'priya.shah@yahoo.test', reason: 'complained', source: 'complaint', upgraded: false },
    ],
  );

  // An out-of-office answer (RFC 3834 sends it to the Return-Path) and a delay notice: accepted, dropped.
  await transport.sendMail({
    envelope: { from: 'omar@news.test', to: [bounceOf.get('omar@news.test')!] },
    raw: 'From: Omar <omar@news.test>\r\nTo: outreach@example.test\r\nSubject: Out of office\r\nAuto-Submitted: auto-replied\r\nMessage-ID: <ooo-1@news.test>\r\n\r\nI am away until Monday.\r\n',
  });
  await transport.sendMail({ envelope: { from: '', to: [bounceOf.get('omar@news.test')!] }, raw: fixture('postfix-delayed.eml') });
  await new Promise((r) => setTimeout(r, 300));
  t.same(await suppressed(), ['jane.doe@prospect.test', 'priya.shah@yahoo.test'], 'omar is not suppressed');
  t.equal((await all()).filter((e) => e.type === 'MessageIngested').length, ingestedBefore, 'nothing sent to a bounce address is ingested');

  // Addresses the service did not make are refused before any data.
  const janes = bounceOf.get('jane.doe@prospect.test')!;
  const omars = bounceOf.get('omar@news.test')!;
  const spliced = janes.replace(/\.[0-9a-f]{24}@/, `.${/\.([0-9a-f]{24})@/.exec(omars)![1]}@`);
  t.match(spliced, /^bounce\+[0-9a-z]{26}\.[0-9a-f]{24}@inbound\.test$/);
  t.not(spliced, janes);
  for (const to of [spliced, janes.replace('@inbound.test', '@elsewhere.test'), 'bounce+01jd5q8w6zb4x0k3m9t2c7v1ne@inbound.test']) {
    const refused = await transport.sendMail({ envelope: { from: '', to: [to] }, raw: fixture('gmail-no-such-user.eml') }).then(() => null, (error: { responseCode?: number }) => error);
    t.equal(refused?.responseCode, 550, `${to} is refused`);
  }
  t.same(await suppressed(), ['jane.doe@prospect.test', 'priya.shah@yahoo.test']);
});

/**
 * A hard bounce that reaches the mail's bounce address while the `messages` read model does not hold
 * the mail yet (projections behind: a RUN_PROJECTIONS=false node following checkpoints, a rebuild)
 * must not be answered 250 and forgotten: the reporting MTA sends a DSN once.
 */
t.test('a report to a valid bounce address whose message doc is not projected yet', async (t) => {
  const { a, services, transport } = await startMailboxHarness(t);

  // The projections fall behind.
  await services.projections.stop();
  await transport.sendMail({
    envelope: { from: 'jane.doe@prospect.test', to: [a.h.tenant.forwardingAddress] },
    raw: 'From: Jane <jane.doe@prospect.test>\r\nTo: x@acme.test\r\nSubject: Guest post idea\r\nMessage-ID: <p-1@prospect.test>\r\n\r\nHi, would you take a guest post about schema markup? https://prospect.test/guide\r\n',
  });
  const sent = await new Promise<{ mailFrom: string }>((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const poll = () => {
      const m = a.sink.received.find((x) => x.rcptTo.includes('jane.doe@prospect.test'));
      if (m) return resolve(m);
      if (Date.now() > deadline) return reject(new Error('the agent did not reply'));
      setTimeout(poll, 20);
    };
    poll();
  });
  t.match(sent.mailFrom, /^bounce\+/);

  // The recipient's server bounces at once; our read model does not have the mail yet.
  const answer = await transport
    .sendMail({ envelope: { from: '', to: [sent.mailFrom] }, raw: fixture('gmail-no-such-user.eml') })
    .then((info) => ({ code: 250, info }), (error: { responseCode?: number }) => ({ code: error.responseCode }));

  // The projections catch up.
  services.projections.start();
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  await new Promise((r) => setTimeout(r, 300));
  const suppressed = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'ContactSuppressed');

  t.equal(answer.code, 451, 'the reporting server is told to try again, not 250 and forgotten');
  t.equal(suppressed.length, 0);
  // The reporting MTA's retry, now that the read model holds the mail.
  await transport.sendMail({ envelope: { from: '', to: [sent.mailFrom] }, raw: fixture('gmail-no-such-user.eml') });
  const after = (await services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'ContactSuppressed').map((e) => (e.data as { email: string }).email);
  t.same(after, ['jane.doe@prospect.test'], 'the retry suppresses the recipient');
});
