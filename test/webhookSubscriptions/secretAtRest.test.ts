import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AesSecretBox, loadOrCreateKey } from '../../src/adapters/crypto/aesSecretBox.ts';
import type { SubscriptionFields } from '../../src/domain/webhookSubscription.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { validBody, webhooksPath } from '../helpers/http.ts';

t.test('embedded default: the key file is created readable by its owner only, and the secret is sealed in the event', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const keyFile = join(app.dataDir, 'secret.key');
  t.ok(existsSync(keyFile), 'DATA_DIR/secret.key exists');
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'mode 0600');
  t.equal(statSync(app.dataDir).mode & 0o077, 0, 'no access for group and others to a data directory the service created');
  for (const file of ['events.sqlite', 'readmodels.sqlite', 'events.sqlite-wal']) {
    t.equal(statSync(join(app.dataDir, file)).mode & 0o777, 0o600, `${file} is mode 0600: it holds hashes and sealed secrets`);
  }

  const tenant = await createTenant(app.services);
  const res = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody() });
  t.equal(res.statusCode, 201);
  const { subscription, secret } = res.json() as { subscription: { id: string }; secret: string };

  const [created] = await app.services.events.readStream(`webhook_subscription-${subscription.id}`);
  t.equal(created?.type, 'SubscriptionCreated');
  const data = created!.data as SubscriptionFields;
  const raw = JSON.stringify({ data: created!.data, metadata: created!.metadata });
  t.notOk(raw.includes(secret), 'no plaintext secret in the event');
  t.notOk(raw.includes(secret.slice('svc_wh_'.length, 'svc_wh_'.length + 20)), 'not even a long piece of it');
  t.notOk('secret' in data, 'no field named secret');
  t.match(data.sealedSecret, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'sealed form');
  t.equal(app.services.secrets.open(data.sealedSecret), secret, 'the sealed secret opens to the secret returned at creation');

  const fromFile = new AesSecretBox(loadOrCreateKey(undefined, keyFile));
  t.equal(fromFile.open(data.sealedSecret), secret, 'the key file alone opens it (the delivery engine can sign after a restart)');
  const otherKey = new AesSecretBox(Buffer.alloc(32, 1));
  t.throws(() => otherKey.open(data.sealedSecret), 'another key cannot open it');
  const tampered = data.sealedSecret.slice(0, -2) + (data.sealedSecret.endsWith('A') ? 'BB' : 'AA');
  t.throws(() => app.services.secrets.open(tampered), 'a tampered ciphertext is refused (GCM tag)');
  t.not(app.services.secrets.seal(secret), app.services.secrets.seal(secret), 'a fresh IV each time');
});

t.test('the key file survives a restart: secrets sealed before still open after', async (t) => {
  const first = await startTestApp();
  const sealed = first.services.secrets.seal('svc_wh_example');
  const dataDir = first.dataDir;
  await first.services.close();
  await first.fastify.close();
  const second = await startTestApp({ dataDir });
  t.teardown(async () => {
    await second.close();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
  });
  t.equal(second.services.secrets.open(sealed), 'svc_wh_example');
});

t.test('with SECRET_KEY configured no key file is written and that key seals', async (t) => {
  const key = Buffer.alloc(32, 9);
  const app = await startTestApp({ env: { SECRET_KEY: key.toString('base64') } });
  t.teardown(() => app.close());
  t.notOk(existsSync(join(app.dataDir, 'secret.key')));
  const sealed = app.services.secrets.seal('svc_wh_configured');
  t.equal(new AesSecretBox(key).open(sealed), 'svc_wh_configured');
});
