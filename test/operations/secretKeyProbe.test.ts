import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { AesSecretBox } from '../../src/adapters/crypto/aesSecretBox.ts';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { bounceAddress } from '../../src/domain/bounceAddress.ts';
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

/** A log written before probes existed, beside the test app's services: its mails drafted under the given keys, in order. */
async function olderLog(t: Test, mails: Array<{ secrets: AesSecretBox; messageId: string; occurredAt: number }>) {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const dir = mkdtempSync(join(tmpdir(), 'key-probe-'));
  const events = new SqliteEventStore(join(dir, 'events.sqlite'));
  t.teardown(async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const drafted = mails.map(({ secrets, messageId, occurredAt }) => ({
    type: 'ReplyDrafted',
    data: { conversationId: 'C1', siteId: 'S1', teamId: 'T1', occurredAt, messageId, returnPath: bounceAddress(secrets, messageId, 'mail.example.net') },
  }));
  await events.append('conversation-C1', drafted, 'no_stream');
  const s = app.services;
  return { events, on: (secrets: AesSecretBox, check = true) => ({ ...s, events, secrets, config: { ...s.config, SECRET_KEY_CHECK: check } }) };
}

t.test('the first start on a log older than the probe: its key must have made the latest mail’s bounce address', async (t) => {
  const used = new AesSecretBox(randomBytes(32));
  const lost = new AesSecretBox(randomBytes(32));
  // Mails under a key lost since, then one under the key in use.
  const { events, on } = await olderLog(t, [
    { secrets: lost, messageId: '01JAAAAAAAAAAAAAAAAAAAAAAA', occurredAt: 1_000 },
    { secrets: used, messageId: '01JBBBBBBBBBBBBBBBBBBBBBBB', occurredAt: 2_000 },
  ]);

  const refused = await assertSecretKeyOpens(on(lost)).catch((e: unknown) => e);
  t.ok(refused instanceof StartupError, 'the key of an older mail only');
  t.match((refused as Error).message, /did not make the bounce address of the latest mail in the event log \(message 01JBBBBBBBBBBBBBBBBBBBBBBB, drafted 1970-01-01T00:00:02\.000Z\)/);
  t.equal((await events.readStream(SECRET_KEY_STREAM)).length, 0, 'and records no probe');

  await assertSecretKeyOpens(on(used));
  const [probe] = await events.readStream(SECRET_KEY_STREAM);
  t.match(probe!.metadata, { recordedBy: { host: hostname(), pid: process.pid } }, 'who recorded it');
  t.notMatch(JSON.stringify(probe!.metadata), /[0-9a-f]{64}/, 'no key in it');
  await t.rejects(assertSecretKeyOpens(on(lost)), new RegExp(`does not open the secret key probe recorded in the event log on \\d{4}-\\S+ by host ${hostname()} \\(pid ${process.pid}, key from`), 'a later start names who recorded the probe');
});

t.test('SECRET_KEY_CHECK=false on a log older than the probe takes a new key whatever its mails were tagged with', async (t) => {
  const lost = new AesSecretBox(randomBytes(32));
  const fresh = new AesSecretBox(randomBytes(32));
  const { events, on } = await olderLog(t, [{ secrets: lost, messageId: '01JCCCCCCCCCCCCCCCCCCCCCCC', occurredAt: 1_000 }]);
  await assertSecretKeyOpens(on(fresh, false));
  t.equal((await events.readStream(SECRET_KEY_STREAM)).length, 1, 'the probe is recorded under the new key');
  await assertSecretKeyOpens(on(fresh));
});
