import t from 'tap';
import { clientGroup } from '../../src/lib/clientGroup.ts';
import { TestClock, createTenant, startTestApp, type TestApp } from '../helpers/testApp.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';

/** A sign-in from a given client address (fastify's inject sets the socket's address). */
async function signInFrom(app: TestApp, remoteAddress: string, email: string, password: string, session?: string) {
  const form = await app.fastify.inject({ method: 'GET', url: '/dashboard/sign-in', remoteAddress });
  const cookie = [...[form.headers['set-cookie']].flat().map((c) => String(c).split(';')[0]), ...(session ? [`svc_session=${session}`] : [])].join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const res = await app.fastify.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams({ csrf, email, password, return_to: '/dashboard' }).toString(),
  });
  return { status: res.statusCode, body: res.body, session: /svc_session=([^;]+)/.exec([res.headers['set-cookie']].flat().join('\n'))?.[1] };
}

/**
 * From a dashboard security audit: failures were limited per (email, address) and per address only,
 * so guesses spread over many addresses (or over the addresses of one IPv6 /64) never ended.
 */
t.test('failed sign-ins to one account are limited whatever the address (SIGN_IN_FAILURES_PER_ACCOUNT)', async (t) => {
  const app = await startTestApp({ env: { SIGN_IN_FAILURES_PER_ACCOUNT: '6' } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'owner@a.example', password: 'a long passphrase' });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await signInFrom(app, `198.51.100.${i + 1}`, 'owner@a.example', `guess${i}`)).status);
  t.same(statuses, [401, 401, 401, 401, 401, 401, 429, 429], 'six failures from six addresses, then refused');
  t.equal((await signInFrom(app, '203.0.113.9', 'owner@a.example', 'a long passphrase')).status, 429, 'refused before any password check, the right one too (for at most the window)');
  t.equal((await signInFrom(app, '203.0.113.9', 'other@a.example', 'wrong')).status, 401, 'another account is not affected');
});

t.test("the account limit spares where the account signed in before, and a success is no failure of it", async (t) => {
  const app = await startTestApp({ env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3' } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'owner@a.example', password: 'a long passphrase' });
  // Four successes from four new places: each counted while its password was checked, then given back.
  for (let i = 1; i <= 4; i++) t.equal((await signInFrom(app, `10.0.0.${i}`, 'owner@a.example', 'a long passphrase')).status, 303);
  const failures: number[] = [];
  for (let i = 1; i <= 4; i++) failures.push((await signInFrom(app, `10.0.1.${i}`, 'owner@a.example', 'wrong')).status);
  t.same(failures, [401, 401, 401, 429], 'three failures reach the limit, the successes before them not counted');
  t.equal((await signInFrom(app, '10.0.0.2', 'owner@a.example', 'a long passphrase')).status, 303, 'from where the owner signed in before: not locked out');
  t.equal((await signInFrom(app, '10.0.2.1', 'owner@a.example', 'a long passphrase')).status, 429, 'from a new place: locked, for at most the window');
});

t.test('locked out of new places by guesses from elsewhere, the person is mailed a link that lets them sign in from where they are', async (t) => {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const clock = new TestClock(new Date());
  const app = await startTestApp({ clock, env: { SIGN_IN_FAILURES_PER_ACCOUNT: '3', OUTBOUND_SMTP_URL: sink.url } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'owner@a.example', password: 'a long passphrase' });
  await createTenant(app.services, { email: 'nopassword@a.example' });
  const guessFromElsewhere = async (email: string, round: number) => {
    for (let i = 1; i <= 3; i++) await signInFrom(app, `198.51.${round}.${i}`, email, 'guess');
  };
  const mailsTo = (email: string) => sink.received.filter((m) => m.rcptTo.includes(email));
  const nextMail = async (email: string, count: number) => {
    const deadline = Date.now() + 5_000;
    while (mailsTo(email).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const mail = mailsTo(email)[count - 1];
    if (!mail) throw new Error(`no mail ${count} to ${email}`);
    const link = new URL(/https?:\/\/\S+\/dashboard\/sign-in\/place\?\S+/.exec(mail.parsed.text ?? '')![0]);
    return { link, fields: Object.fromEntries(link.searchParams) };
  };
  const use = (remoteAddress: string, fields: Record<string, string>) =>
    app.fastify.inject({ method: 'POST', url: '/dashboard/sign-in/place', remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });

  await guessFromElsewhere('owner@a.example', 100);
  const locked = await signInFrom(app, '10.0.2.1', 'owner@a.example', 'a long passphrase');
  t.equal(locked.status, 429, 'the person, from a new place, is refused');
  t.match(locked.body, /it has been mailed a link/);
  const first = await nextMail('owner@a.example', 1);

  const opened = await app.fastify.inject({ method: 'GET', url: first.link.pathname + first.link.search, remoteAddress: '10.0.2.1' });
  t.equal(opened.statusCode, 200, 'opening the link shows a button (a mail scanner fetching it uses nothing up)');
  t.match(opened.body, /Sign in from here/);
  t.equal((await use('10.0.2.1', { ...first.fields, token: first.fields.token!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) })).statusCode, 400, 'a token one character off is refused');
  t.equal((await use('10.0.2.1', { ...first.fields, email: 'nopassword@a.example' })).statusCode, 400, 'so is the token with another address');
  const uses = await Promise.all(Array.from({ length: 6 }, () => use('10.0.2.1', first.fields)));
  t.same(uses.map((u) => u.statusCode).sort(), [303, 400, 400, 400, 400, 400], 'of six uses at once, one is taken');
  t.equal(uses.find((u) => u.statusCode === 303)!.headers.location, '/dashboard/sign-in?place=known');
  t.match((await app.fastify.inject({ method: 'GET', url: '/dashboard/sign-in?place=known' })).body, /You can sign in from here now/);
  t.equal((await signInFrom(app, '10.0.2.1', 'owner@a.example', 'wrong')).status, 401, 'the password is still checked there');
  t.equal((await signInFrom(app, '10.0.2.1', 'owner@a.example', 'a long passphrase')).status, 303, 'and the person signs in from there');

  t.equal((await signInFrom(app, '10.0.3.1', 'owner@a.example', 'a long passphrase')).status, 429, 'another new place is still refused');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(mailsTo('owner@a.example').length, 1, 'and no second mail within the hour');

  // The refusal reads the same for an address with an account, one without a password, one without an account.
  await guessFromElsewhere('nopassword@a.example', 101);
  await guessFromElsewhere('nobody@a.example', 102);
  const refusals = await Promise.all(['owner@a.example', 'nopassword@a.example', 'nobody@a.example'].map((email) => signInFrom(app, '10.0.4.1', email, 'guess')));
  const shape = (r: { status: number; body: string }, email: string) => ({ status: r.status, body: r.body.replaceAll(email, 'EMAIL').replace(/name="csrf" value="[^"]+"/, '') });
  t.same(shape(refusals[1]!, 'nopassword@a.example'), shape(refusals[0]!, 'owner@a.example'), 'no password: the same page');
  t.same(shape(refusals[2]!, 'nobody@a.example'), shape(refusals[0]!, 'owner@a.example'), 'no account: the same page');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(mailsTo('nopassword@a.example').length + mailsTo('nobody@a.example').length, 0, 'and neither is mailed');

  // An hour on: a new mail, whose link is good for an hour only.
  clock.advance(61 * 60_000);
  await guessFromElsewhere('owner@a.example', 103);
  t.equal((await signInFrom(app, '10.0.5.1', 'owner@a.example', 'a long passphrase')).status, 429);
  const second = await nextMail('owner@a.example', 2);
  clock.advance(61 * 60_000);
  t.equal((await use('10.0.5.1', second.fields)).statusCode, 400, 'a link older than an hour is refused');
  t.equal((await use('10.0.5.1', { ...second.fields, issued: String(clock.now().getTime() - 60_000) })).statusCode, 400, 'and its time cannot be moved');
});

t.test('IPv6 addresses of one /64 are one client for the per-address limits', async (t) => {
  const app = await startTestApp({ env: { SIGN_IN_FAILURES_PER_ADDRESS: '3' } });
  t.teardown(() => app.close());
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await signInFrom(app, `2001:db8:1:2::${(i + 1).toString(16)}`, `guess${i}@x.example`, 'wrong')).status);
  t.same(statuses, [401, 401, 401, 429]);
  t.equal((await signInFrom(app, '2001:db8:1:3::1', 'guess9@x.example', 'wrong')).status, 401, 'another /64 is another client');
  t.equal(clientGroup('2001:0db8:0000:0001::abcd'), '2001:db8:0:1::/64');
  t.equal(clientGroup('::ffff:192.0.2.1'), '192.0.2.1', 'an IPv4-mapped address is the IPv4 address');
  t.equal(clientGroup('192.0.2.1'), '192.0.2.1');
  for (const [ip, group] of <Array<[string, string]>>[
    ['0:0:0:0:0:ffff:1.2.3.4', '1.2.3.4'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['::ffff:1.2.3.4%1', '1.2.3.4'],
    ['64:ff9b::1.2.3.4', '1.2.3.4'],
    ['1:2::3:4:5:1.2.3.4', '1:2:0:3::/64'],
    ['::1.2.3.4', '0:0:0:0::/64'],
    ['FE80::1%eth0', 'fe80:0:0:0::/64'],
  ]) t.equal(clientGroup(ip), group, ip);
});

t.test('signing in ends the session the browser still held', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'first@a.example', password: 'a long passphrase' });
  await createTenant(app.services, { email: 'second@b.example', password: 'a long passphrase' });
  const first = await signInFrom(app, '192.0.2.1', 'first@a.example', 'a long passphrase');
  t.equal(first.status, 303);
  const dashboard = (session: string) => app.fastify.inject({ method: 'GET', url: '/dashboard', headers: { cookie: `svc_session=${session}` } });
  t.equal((await dashboard(first.session!)).statusCode, 200);
  // The sign-in form posted again with the first session's cookie still sent (another account here).
  const second = await signInFrom(app, '192.0.2.1', 'second@b.example', 'a long passphrase', first.session);
  t.equal(second.status, 303);
  t.not(second.session, first.session, 'a new session');
  const old = await dashboard(first.session!);
  t.equal(old.statusCode, 303, 'the earlier one no longer opens the dashboard');
  t.match(old.headers.location, /^\/dashboard\/sign-in/);
  t.equal((await dashboard(second.session!)).statusCode, 200);
});
