import t from 'tap';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser } from '../oauth/helpers.ts';

/**
 * An attempt the per-(email, address) limit refuses with 429 checks no password, so it is no failure
 * of the client's address either: a person retrying their own locked account must not lock out
 * everyone behind the same address (an office NAT) after only five password checks.
 */
t.test('a 429 from the per-email limit is not a failure of the address', async (t) => {
  const app = await startTestApp({ listen: true, env: { SIGN_IN_FAILURES_PER_ADDRESS: '8' } });
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'colleague@b.example', password: 'a long passphrase' });

  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await new Browser(app.url).signIn('me@b.example', 'wrong')).status);
  t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429], 'five password checks, then refused for this email');

  const colleague = await new Browser(app.url).signIn('colleague@b.example', 'a long passphrase');
  t.equal(colleague.status, 303, 'a colleague at the same address signs in: only 5 failures were checked');
});
