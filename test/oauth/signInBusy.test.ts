import t from 'tap';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser } from './helpers.ts';

/**
 * Two password checks at once and SIGN_IN_MAX_QUEUED_CHECKS waiting: a sign-in beyond them is
 * answered 429 at once, counts as no failure, and the checks never take all of libuv's thread pool
 * (every DNS lookup of the process shares it) whatever the number of client addresses.
 */
t.test('sign-ins beyond the password checks in flight and queued get 429 at once, and count as no failure', async (t) => {
  const app = await startTestApp({ listen: true, env: { SIGN_IN_MAX_QUEUED_CHECKS: '0', SIGN_IN_FAILURES_PER_ADDRESS: '10' } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'owner@b.example', password: 'a long passphrase' });

  // Each browser gets its form (and CSRF cookie) first; then eight posts at once.
  const browsers = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const b = new Browser(app.url);
      const form = await b.request('/dashboard/sign-in');
      return { b, csrf: /name="csrf" value="([^"]+)"/.exec(form.text)![1]!, email: `guess${i}@x.example` };
    }),
  );
  const answers = await Promise.all(browsers.map(({ b, csrf, email }) => b.request('/dashboard/sign-in', { form: { csrf, return_to: '/dashboard', email, password: 'wrong' } })));
  const statuses = answers.map((a) => a.status);
  const busy = answers.filter((a) => a.status === 429);
  t.ok(statuses.filter((s) => s === 401).length >= 2, `two were checked (${statuses.join(' ')})`);
  t.ok(busy.length >= 1, 'the rest were refused at once');
  t.ok(busy.every((a) => /Too many sign-ins at this moment/.test(a.text) && a.headers.get('retry-after') === '1'));
  // Only the checked ones count against the address (limit 10): as many failures are left as were not checked.
  const checked = statuses.filter((s) => s === 401).length;
  let more = 0;
  for (let i = 0; i < 12; i++) {
    const status = (await new Browser(app.url).signIn(`later${i}@x.example`, 'wrong')).status;
    if (status !== 401) break;
    more += 1;
  }
  t.equal(more, 10 - checked, `${more} more failures before the address limit: the refused ones counted nothing`);
});
