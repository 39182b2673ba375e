import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import type { SmtpLimits } from '../../src/processors/smtpLimits.ts';
import { getMessage } from '../../src/readModels/messages.ts';
import { createTenant } from '../helpers/testApp.ts';
import { startMailboxApp } from './helpers.ts';
import { RawSmtp } from './rawSmtp.ts';

/**
 * What one sender can make the forwarding mailbox hold, found by an audit: every other tenant
 * shares the process, so none of it may be unbounded.
 */
const MiB = 1024 * 1024;

const setUp = (t: Test, limits: Partial<SmtpLimits> = {}, maxMessageBytes = MiB, parse: { parseThreads?: number; parseTimeoutMs?: number } = {}) =>
  startMailboxApp(t, { limits, maxMessageBytes, ...parse });

async function opened(t: Test, port: number, to: string) {
  const smtp = await RawSmtp.open(port);
  t.teardown(() => smtp.close());
  t.match(await smtp.cmd('EHLO sender.test'), /^250/);
  t.match(await smtp.cmd('MAIL FROM:<x@sender.test>'), /^250/);
  t.match(await smtp.cmd(`RCPT TO:<${to}>`), /^250/);
  return smtp;
}

t.test('a message past SMTP_MAX_MESSAGE_BYTES is read to its end but not kept, and refused with 552', async (t) => {
  const { tenant, mailbox } = await setUp(t);
  const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
  t.match(await smtp.cmd('DATA'), /^354/);
  // What is retained, not garbage not collected yet: a full collection before each sample.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const base = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
  }, 50);
  const block = Buffer.from(`${'a'.repeat(998)}\r\n`.repeat(64));
  const end = smtp.reply();
  for (let sent = 0; sent < 100 * MiB; sent += block.length) await smtp.write(block);
  await smtp.write('\r\n.\r\n');
  const answer = await end;
  clearInterval(sampler);
  t.match(answer, /^552 /);
  t.ok(peak < 40 * MiB, `100 MiB sent against a 1 MiB limit: the process held at most ${Math.round(peak / MiB)} MiB more (all of it before)`);
});

t.test('an HTML-only mail is read in one linear pass: the thread every tenant shares does not stall, and its links keep their URLs', async (t) => {
  const { app, tenant, mailbox } = await setUp(t, {}, 10 * MiB);
  const unit = '<div><p>x <a href="https://e.test/a">l</a></p></div>';
  const filler = `${unit.repeat(15)}\r\n`.repeat(Math.floor((1200 * 1024) / (unit.length * 15 + 2)));
  const pitch = '<p>Hi! Please add a link to <a href="https://linkco.io/one">our free tool</a> from https://example.test/a &mdash; thanks.</p>';
  const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
  t.match(await smtp.cmd('DATA'), /^354/);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const end = smtp.reply();
  await smtp.write(`From: Max <max@linkco.io>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <html-1@linkco.io>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n`);
  await smtp.write(`<html><head><style>p{}</style></head><body>${pitch}${filler}</body></html>`);
  await smtp.write('\r\n.\r\n');
  t.match(await end, /^250 /);
  delay.disable();
  const stallMs = delay.max / 1e6;
  t.ok(stallMs < 1_500, `1.2 MB of HTML: the longest event-loop stall was ${Math.round(stallMs)} ms (about 8 s before)`);

  await app.services.projections.waitFor(await app.services.events.headPosition(), 10_000);
  const ingested = (await app.services.events.readAll({ limit: 100_000 })).find((e) => e.type === 'MessageIngested')!.data as { messageId: string };
  const message = await getMessage(app.services.readModels, ingested.messageId);
  t.match(message!.bodyText, /^Hi! Please add a link to our free tool \[https:\/\/linkco\.io\/one\] from https:\/\/example\.test\/a — thanks\.\n\nx l \[https:\/\/e\.test\/a\]/, 'the text, with each link URL after its words, without the style');
  t.notOk(message!.bodyText.includes('p{}'));
});

t.test('a header folded over thousands of lines, or too long, is refused with 552 before it is parsed; real mail passes', async (t) => {
  const { app, tenant, mailbox } = await setUp(t, {}, 10 * MiB);
  const send = async (header: string, id: string) => {
    const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
    t.match(await smtp.cmd('DATA'), /^354/);
    const end = smtp.reply();
    await smtp.write(`From: Max <max@linkco.io>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <${id}@linkco.io>\r\n${header}\r\nHello, a link idea for you.\r\n.\r\n`);
    return end;
  };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // Folded 80,000 times (320 KB): 11 s of the shared thread before (the header parser is quadratic in its lines).
  t.match(await send(`X-Big: a${'\r\n a'.repeat(80_000)}\r\n`, 'folded'), /^552 5\.3\.4 header section too big/);
  // A To with 30,000 addresses (530 KB): 2 s before.
  t.match(await send(`Cc: ${Array.from({ length: 30_000 }, (_, i) => `u${i}@x.test`).join(', ')}\r\n`, 'many'), /^552 5\.3\.4 header section too big/);
  delay.disable();
  t.ok(delay.max / 1e6 < 500, `the longest event-loop stall was ${Math.round(delay.max / 1e6)} ms`);
  // A long but real header section (300 Received-like lines, a 20 KB DKIM-like field) is taken.
  const received = Array.from({ length: 300 }, (_, i) => `Received: from relay${i}.example.net by mx.example.net; Mon, 1 Jan 2026 00:00:00 +0000\r\n`).join('');
  t.match(await send(`${received}X-Sig: ${'A'.repeat(20_000)}\r\n`, 'real'), /^250 /);
  t.equal((await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length, 1, 'only the real one ingested');
});

t.test('a mail whose parsing runs past SMTP_PARSE_TIMEOUT_MS is answered 451, then 554 when it runs over again, without stalling the shared thread; the next mail is read', async (t) => {
  const { app, tenant, mailbox } = await setUp(t, {}, MiB, { parseThreads: 1, parseTimeoutMs: 1_000 });
  const send = async (body: string) => {
    const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
    t.match(await smtp.cmd('DATA'), /^354/);
    const end = smtp.reply();
    await smtp.write(`${body}\r\n.\r\n`);
    return end;
  };
  const head = (id: string) => `From: Max <max@linkco.io>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <${id}@linkco.io>\r\n`;
  // A MIME part's own header is not the message's header section, so its cap does not hold it: folded
  // 80,000 times (320 KB), it held the process, the API with it, for 25 s in a review.
  const partHeader = `X-Big: a${'\r\n a'.repeat(80_000)}`;
  const hostile = `${head('slow')}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n${partHeader}\r\n\r\nHello\r\n--b--`;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  // The budget is wall-clock time: a first overrun may be the machine's doing, so the sender is asked to try again.
  t.match(await send(hostile), /^451 4\.3\.0 the message took too long to read \(the work took more than 1000 ms\); try again later/);
  const ms = performance.now() - started;
  t.match(await send(hostile), /^554 5\.6\.0 the message is too complex to read \(the work took more than 1000 ms\)/, 'the same mail again: refused for good');
  delay.disable();
  t.ok(ms < 5_000, `answered after ${Math.round(ms)} ms (budget 1,000 ms)`);
  t.ok(delay.max / 1e6 < 500, `the longest event-loop stall was ${Math.round(delay.max / 1e6)} ms`);
  // The one parsing thread was ended and replaced: the next mail is read.
  t.match(await send(`${head('real')}\r\nHello, a link idea for you.`), /^250 /);
  t.equal((await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length, 1, 'only the real one ingested');
});

t.test('a slow mail whose sender hangs up after the final dot is abandoned: mails made to be slow cannot queue up ahead of real ones', async (t) => {
  const { app, tenant, mailbox } = await setUp(t, {}, MiB, { parseThreads: 1, parseTimeoutMs: 1_000 });
  const head = (id: string) => `From: Max <max@linkco.io>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <${id}@linkco.io>\r\n`;
  const slow = (id: string) =>
    `${head(id)}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\nX-Big: a${'\r\n a'.repeat(80_000)}\r\n\r\nHello\r\n--b--`;
  // Six, each sent and its connection dropped 50 ms after the final dot (a review measured 7.3 s for the real mail behind them before).
  for (let i = 0; i < 6; i++) {
    const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
    t.match(await smtp.cmd('DATA'), /^354/);
    await smtp.write(`${slow(`slow-${i}`)}\r\n.\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    smtp.close();
  }
  const started = performance.now();
  const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
  t.match(await smtp.cmd('DATA'), /^354/);
  t.match(await smtp.cmd(`${head('real')}\r\nHello, a link idea for you.\r\n.`), /^250 /);
  const ms = performance.now() - started;
  t.ok(ms < 3_000, `the real mail was taken after ${Math.round(ms)} ms`);
  t.equal((await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length, 1);
});

t.test("one sender's slow mails take turns with other senders' mail on the parsing threads, and at most half the queue waits", async (t) => {
  const { app, tenant, mailbox } = await setUp(t, {}, MiB, { parseThreads: 1, parseTimeoutMs: 2_000 });
  const head = (id: string) => `From: Max <max@linkco.io>\r\nTo: ${tenant.forwardingAddress}\r\nSubject: Link idea\r\nMessage-ID: <${id}@linkco.io>\r\n`;
  const slow = (id: string) =>
    `${head(id)}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\nX-Big: a${'\r\n a'.repeat(80_000)}\r\n\r\nHello\r\n--b--`;
  const from = async (address: string) => {
    const smtp = await RawSmtp.open(mailbox.port, address);
    t.teardown(() => smtp.close());
    t.match(await smtp.cmd('EHLO sender.test'), /^250/);
    t.match(await smtp.cmd('MAIL FROM:<x@sender.test>'), /^250/);
    t.match(await smtp.cmd(`RCPT TO:<${tenant.forwardingAddress}>`), /^250/);
    t.match(await smtp.cmd('DATA'), /^354/);
    return smtp;
  };
  // The parsing thread is up (a first mail read).
  t.match(await (await from('127.0.0.4')).cmd(`${head('first')}\r\nA first mail.\r\n.`), /^250 /);
  // One sender (127.0.0.2) sends six slow mails at once and keeps its connections open: one is parsed, four wait (half
  // of the queue of 8), the sixth is turned away at once.
  const floods = await Promise.all([0, 1, 2, 3, 4, 5].map(() => from('127.0.0.2')));
  const answered: string[] = [];
  for (const [i, smtp] of floods.entries()) void smtp.cmd(`${slow(`flood-${i}`)}\r\n.`).then((a) => answered.push(a));
  await new Promise((r) => setTimeout(r, 300));
  const started = performance.now();
  const real = await from('127.0.0.3');
  t.match(await real.cmd(`${head('real')}\r\nHello, a link idea for you.\r\n.`), /^250 /);
  const ms = performance.now() - started;
  // Behind all five it would be over 10 s (five budgets of 2 s); behind the one being parsed, under 2 s and the
  // thread's restart (a loaded CI run took 4.1 s: the bound leaves room for that, well short of 10 s).
  t.ok(ms < 6_000, `another sender's mail was taken after ${Math.round(ms)} ms, behind the one slow mail being parsed, not all five`);
  t.same(answered.map((a) => a.slice(0, 9)).filter((code) => code === '451 4.3.2'), ['451 4.3.2'], "the flood's sixth was turned away (its share of the queue full)");
  t.ok(answered.filter((a) => a.startsWith('451 4.3.0')).length <= 2, 'and the real mail went before most of the flood');
  for (const smtp of floods) smtp.close();
  t.equal((await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'MessageIngested').length, 2);
});

t.test('an HTML mail nested thousands of blockquotes deep is read in linear time and memory', async (t) => {
  const { htmlToText } = await import('../../src/domain/articleText.ts');
  const depth = 30_000;
  const html = `${'<blockquote><p>q</p>'.repeat(depth)}${'</blockquote>'.repeat(depth)}<p>top</p>`;
  const started = performance.now();
  const text = htmlToText(html, { mail: true });
  const ms = performance.now() - started;
  t.ok(ms < 1_500, `${depth} levels took ${Math.round(ms)} ms (9 s and 1.6 GB before)`);
  t.ok(text.length < 50 * depth, `the text stays linear in the input: ${text.length} characters`);
  t.match(text, /^> q\n\n> > q/, 'the first levels quoted as mail clients do');
  t.match(text, /(> ){20}q/, 'deeper levels read as the deepest shown');
  t.notMatch(text, /(> ){21}/);
  t.match(text, /\n\ntop$/);
});

t.test('connections are bounded, from everyone and from one address; idle ones are closed', async (t) => {
  const { tenant, mailbox } = await setUp(t, { maxClientsPerAddress: 3, maxClients: 100, socketTimeoutMs: 400 });
  const held: RawSmtp[] = [];
  for (let i = 0; i < 3; i++) held.push(await RawSmtp.open(mailbox.port));
  t.teardown(() => held.forEach((s) => s.close()));
  const refused = await RawSmtp.greeting(mailbox.port);
  t.match(refused, /^421 /, 'the 4th connection from one address is refused');
  held.pop()!.close();
  await new Promise((r) => setTimeout(r, 100));
  t.match(await RawSmtp.greeting(mailbox.port), /^220 /, 'once one closed, another is greeted');

  const idle = await opened(t, mailbox.port, tenant.forwardingAddress);
  const closed = await new Promise<number>((resolve) => {
    const started = Date.now();
    // On a loaded machine the timeout may have closed it before this line ran (a CI run hung here).
    if (idle.socket.destroyed || idle.socket.readableEnded) return resolve(0);
    // The server's end of the connection (FIN) is the close that matters; bounded, so a miss fails rather than hangs.
    idle.socket.once('end', () => resolve(Date.now() - started));
    idle.socket.once('close', () => resolve(Date.now() - started));
    setTimeout(() => resolve(Number.POSITIVE_INFINITY), 5_000);
  });
  t.ok(closed < 3_000, `an idle connection is closed (after ${closed} ms, SMTP_SOCKET_TIMEOUT_MS 400)`);

  const few = await setUp(t, { maxClients: 2, maxClientsPerAddress: 100 });
  const two = [await RawSmtp.open(few.mailbox.port), await RawSmtp.open(few.mailbox.port)];
  t.teardown(() => two.forEach((s) => s.close()));
  t.match(await RawSmtp.greeting(few.mailbox.port), /^421 /, 'past SMTP_MAX_CLIENTS, a connection is refused');
});

t.test('recipients per message are bounded', async (t) => {
  const { app, tenant, mailbox } = await setUp(t, { maxRecipients: 2 });
  const other = await createTenant(app.services);
  const smtp = await opened(t, mailbox.port, tenant.forwardingAddress);
  t.match(await smtp.cmd(`RCPT TO:<${other.forwardingAddress}>`), /^250/);
  t.match(await smtp.cmd(`RCPT TO:<${tenant.forwardingAddress}>`), /^452 /, 'a third recipient is refused for now (RFC 5321 §4.5.3.1.10)');
});
