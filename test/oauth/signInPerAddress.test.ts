import t from 'tap';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser } from './helpers.ts';

/**
 * A client guessing a new email on every attempt is refused past SIGN_IN_FAILURES_PER_ADDRESS (each
 * guess is a scrypt check on the thread pool every tenant's DNS lookups share); a success before the
 * guesses does not count against them.
 */
t.test('failed sign-ins are limited per client address, whatever the email', async (t) => {
  const app = await startTestApp({ listen: true, env: { SIGN_IN_FAILURES_PER_ADDRESS: '4' } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'owner@b.example', password: 'a long passphrase' });

  t.equal((await new Browser(app.url).signIn('owner@b.example', 'a long passphrase')).status, 303, 'a success counts nothing against the address');
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await new Browser(app.url).signIn(`guess${i}@x.example`, 'wrong')).status);
  t.same(statuses, [401, 401, 401, 401, 429, 429], 'four failures with four emails, then refused');
  const locked = await new Browser(app.url).signIn('owner@b.example', 'a long passphrase');
  t.equal(locked.status, 429, 'refused before any password check, the right one too');
  t.ok(Number(locked.headers.get('retry-after')) > 0, 'with Retry-After');
});
