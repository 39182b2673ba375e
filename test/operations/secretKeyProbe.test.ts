import { randomBytes } from 'node:crypto';
import t from 'tap';
import { AesSecretBox } from '../../src/adapters/crypto/aesSecretBox.ts';
import { SECRET_KEY_STREAM } from '../../src/domain/secretKey.ts';
import { assertSecretKeyOpens } from '../../src/lifecycle/secretKeyCheck.ts';
import { StartupError } from '../../src/lifecycle/startupFailure.ts';
import { startTestApp } from '../helpers/testApp.ts';

/** The key probe in process (the started server and workers: test/operations/startupFailures.test.ts). */
t.test('processes starting at once on a new log record one probe; a process with another key is refused; an override records its own', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const s = app.services;
  await Promise.all([assertSecretKeyOpens(s), assertSecretKeyOpens(s), assertSecretKeyOpens(s)]);
  const probes = await s.events.readStream(SECRET_KEY_STREAM);
  t.equal(probes.length, 1, 'one probe, though three started at once');
  t.notMatch(JSON.stringify(probes[0]!.data), 'outreach secret key probe', 'sealed, not in the clear');
  await assertSecretKeyOpens(s);
  t.equal((await s.events.readStream(SECRET_KEY_STREAM)).length, 1, 'a later start with the key records nothing');

  const other = { ...s, secrets: new AesSecretBox(randomBytes(32)) };
  await t.rejects(assertSecretKeyOpens(other), StartupError, 'another key');
  await assertSecretKeyOpens({ ...other, config: { ...s.config, SECRET_KEY_CHECK: false } });
  t.equal((await s.events.readStream(SECRET_KEY_STREAM)).length, 2, 'SECRET_KEY_CHECK=false under another key records a probe for it');
  await assertSecretKeyOpens(other);
  await t.rejects(assertSecretKeyOpens(s), StartupError, 'the first key is then the other one');
});
