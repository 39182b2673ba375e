import nodemailer from 'nodemailer';
import t from 'tap';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import type { MessageDoc } from '../../src/readModels/messages.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, eventsOfType } from './helpers.ts';

t.test('forwarding mailbox: a real SMTP client delivers to forward+<token>@MAIL_DOMAIN', async (t) => {
  const app = await startTestApp({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => app.close());
  const { services } = app;
  const tenant = await createTenant(services);
  const errors: unknown[] = [];
  const mailbox = await startForwardingMailbox(services, {
    host: '127.0.0.1',
    port: 0,
    mailDomain: 'inbound.test',
    maxMessageBytes: 1024 * 1024,
    onError: (e) => errors.push(e),
  });
  t.teardown(() => mailbox.close());
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  t.match(tenant.forwardingAddress, /^forward\+[0-9a-f]+@inbound\.test$/);

  t.test('a forwarded pitch is ingested with extraction; the prospect is the forwarded sender', async (t) => {
    const info = await transport.sendMail({
      from: 'Owner <owner@example.test>',
      to: tenant.forwardingAddress,
      subject: 'Fwd: Quick link suggestion',
      messageId: '<fwd-1@example.test>',
      text: `FYI\n\n---------- Forwarded message ---------\nFrom: Jane Prospect <jane@prospect.io>\nSubject: ${PITCH.subject}\n\n${PITCH.bodyText}`,
    });
    t.same(info.accepted, [tenant.forwardingAddress]);
    const ingested = (await eventsOfType(services, 'MessageIngested')).at(-1)!;
    t.match(ingested.data, { siteId: tenant.siteId, channel: 'smtp', from: 'jane@prospect.io', fromName: 'Jane Prospect', externalMessageId: 'fwd-1@example.test', entrySource: 'forwarded_actionable' });
  });

  t.test('Message-Id, In-Reply-To and References come from the headers: a reply threads', async (t) => {
    await services.projections.waitFor(await services.events.headPosition(), 5_000);
    const first = (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as { conversationIds: string[] };
    await transport.sendMail({
      from: 'Jane Prospect <jane@prospect.io>',
      to: tenant.forwardingAddress,
      subject: 'Re: Quick link suggestion',
      messageId: '<reply-1@prospect.io>',
      inReplyTo: '<fwd-1@example.test>',
      references: ['<fwd-1@example.test>'],
      text: 'Any news?',
    });
    const reply = (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as MessageDoc & { threaded: boolean; conversationIds: string[] };
    t.equal(reply.from, 'jane@prospect.io');
    t.equal(reply.inReplyTo, '<fwd-1@example.test>');
    t.match(reply.references, /fwd-1@example\.test/);
    t.equal(reply.threaded, true);
    t.same(reply.conversationIds, first.conversationIds, 'joined the forwarded pitch conversation');
  });

  t.test('a redelivery of the same Message-Id is not ingested twice', async (t) => {
    const before = (await eventsOfType(services, 'MessageIngested')).length;
    await transport.sendMail({ from: 'jane@prospect.io', to: tenant.forwardingAddress, subject: 'x', messageId: '<reply-1@prospect.io>', text: 'Any news?' });
    t.equal((await eventsOfType(services, 'MessageIngested')).length, before);
  });

  t.test('only a member of the team forwards: anyone else is the sender of their own mail, whatever block it quotes', async (t) => {
    // A team whose owner's address is not on its site's domain, and another team's user.
    const acme = await createTenant(services, { email: 'boss@elsewhere.io', domain: 'acme.test' });
    await createTenant(services, { email: 'rival@other-team.io', domain: 'other-team.io' });
    const block = (from: string) => `Thanks!\n\n-----Original Message-----\nFrom: ${from}\nSent: Monday\n\n${PITCH.bodyText}`;
    const cases = [
      // A prospect's reply quoting the agent's mail, Outlook-style: the agent mailed itself.
      { from: 'Gil <gil@prospect10.io>', quoted: 'Ana from Acme <outreach@acme.test>', sender: 'gil@prospect10.io', forwarded: false },
      // A stranger naming a third party: the agent mailed that party text the stranger chose.
      { from: 'stranger@random-ext.io', quoted: 'Victim Person <victim@victim.io>', sender: 'stranger@random-ext.io', forwarded: false },
      // Another team's user is a stranger here.
      { from: 'rival@other-team.io', quoted: 'Victim Person <victim@victim.io>', sender: 'rival@other-team.io', forwarded: false },
      // A user of the team, and an address on the site's domain, forward: the block's sender is the prospect.
      { from: 'Boss <BOSS@elsewhere.io>', quoted: 'Kim <kim@prospect11.io>', sender: 'kim@prospect11.io', forwarded: true },
      { from: 'editor@acme.test', quoted: 'Lou <lou@prospect12.io>', sender: 'lou@prospect12.io', forwarded: true },
      { from: 'desk@mail.acme.test', quoted: 'Mo <mo@prospect13.io>', sender: 'mo@prospect13.io', forwarded: true },
      // A member forwards a mail of the site's own domain (the agent's, a colleague's): it names no prospect.
      { from: 'editor@acme.test', quoted: 'Ana from Acme <outreach@ACME.test>', sender: 'editor@acme.test', forwarded: false },
    ];
    for (const c of cases) {
      await transport.sendMail({ from: c.from, to: acme.forwardingAddress, subject: 'Re: Quick link suggestion', text: block(c.quoted) });
      const ingested = (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as { siteId: string; from: string; forwarded?: boolean };
      t.equal(ingested.siteId, acme.siteId);
      t.equal(ingested.from.toLowerCase(), c.sender, `${c.from} quoting ${c.quoted}`);
      t.equal(ingested.forwarded ?? false, c.forwarded);
    }
  });

  t.test('a forwarded block whose sender is not an email address is refused, and nothing is stored', async (t) => {
    const before = (await eventsOfType(services, 'MessageIngested')).length;
    const err = await transport
      .sendMail({
        from: 'Owner <owner@example.test>',
        to: tenant.forwardingAddress,
        subject: 'Fwd: odd',
        text: 'FYI\n\n---------- Forwarded message ---------\nFrom: Jane <jane@@prospect>\nSubject: hi\n\nHello',
      })
      .then(
        () => null,
        (e: { responseCode?: number }) => e,
      );
    t.equal(err?.responseCode, 550, 'refused with 550');
    t.equal((await eventsOfType(services, 'MessageIngested')).length, before, 'nothing stored');
    // Sent to another team's site too, where the sender is no member: that copy is the sender's own pitch, and is taken.
    const other = await createTenant(services, { email: 'boss@other-team.test', domain: 'other-site.test' });
    const both = await transport.sendMail({
      from: 'Owner <owner@example.test>',
      to: [tenant.forwardingAddress, other.forwardingAddress],
      subject: 'Fwd: odd',
      text: 'FYI\n\n---------- Forwarded message ---------\nFrom: Jane <jane@@prospect>\nSubject: hi\n\nHello',
    });
    t.same(both.accepted.length, 2, 'accepted: one site took it');
    const stored = (await eventsOfType(services, 'MessageIngested')).slice(before).map((e) => e.data as { siteId: string; from: string });
    t.same(stored.map((d) => [d.siteId, d.from]), [[other.siteId, 'owner@example.test']], "only the other site's copy, from the mail's sender");
  });

  t.test('unknown tokens and other domains are rejected at RCPT TO', async (t) => {
    for (const to of ['forward+ffffffffffffffffffffffff@inbound.test', `forward+${tenant.forwardingAddress.split('+')[1]!.split('@')[0]}@other.test`, 'someone@inbound.test']) {
      const err = await transport.sendMail({ from: 'jane@prospect.io', to, subject: 'x', text: 'y' }).then(
        () => null,
        (e: { responseCode?: number; command?: string }) => e,
      );
      t.ok(err, `${to} refused`);
      t.equal(err?.responseCode, 550, `${to}: 550`);
      t.equal(err?.command, 'RCPT TO', `${to}: at RCPT TO`);
    }
    t.same(errors, [], 'no internal errors');
  });

  t.test('control characters and unpaired surrogates in a mail are dropped (made U+FFFD), the mail is still taken', async (t) => {
    // Encoded words and quoted-printable carry them past the SMTP layer: mailparser decodes them.
    await transport.sendMail({
      envelope: { from: 'pat@prospect.io', to: tenant.forwardingAddress },
      raw: [
        'From: =?utf-8?q?Pat=00_Prospect?= <pat@prospect.io>',
        `To: ${tenant.forwardingAddress}`,
        'Subject: =?utf-8?q?Guest=00_post=1B_idea?=',
        'Message-ID: <ctl-1@prospect.io>',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'Hello=00 there, a link idea =ED=A0=80 for you.',
        '',
      ].join('\r\n'),
    });
    const ingested = (await eventsOfType(services, 'MessageIngested')).at(-1)!.data as { externalMessageId: string; subject: string; bodyText: string; fromName: string };
    t.equal(ingested.externalMessageId, 'ctl-1@prospect.io');
    t.equal(ingested.subject, 'Guest post idea');
    t.equal(ingested.fromName, 'Pat Prospect');
    t.notMatch(ingested.bodyText, /[\u0000-\u0008\u000E-\u001F]/, 'no control character stored');
    t.match(ingested.bodyText, /^Hello there/);
  });
});
