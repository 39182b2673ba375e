import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { PASSWORD, startOAuthApp } from '../oauth/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The Team page clicked through in Debian's Chromium: an owner invites a person, who joins with the code mailed to them and their own password, then changes it. */
t.test('inviting a person, their joining and their password change in a real browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent (apt-get install -y chromium)` }, async (t) => {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const { app, ownerEmail, issuer } = await startOAuthApp({ env: { OUTBOUND_SMTP_URL: sink.url } });
  t.teardown(() => app.close());
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());

  const owner = await (await browser.newContext()).newPage();
  await owner.goto(`${issuer}/dashboard`);
  await owner.getByLabel('Email').fill(ownerEmail);
  await owner.getByLabel('Password').fill(PASSWORD);
  await owner.getByRole('button', { name: 'Sign in' }).click();
  await owner.waitForURL(`${issuer}/dashboard`);
  await owner.getByRole('link', { name: 'Team and password' }).click();
  await owner.getByLabel('Email').fill('colleague@example.test');
  await owner.getByLabel('Role', { exact: true }).selectOption('admin');
  await owner.getByRole('button', { name: 'Invite' }).click();
  t.match(await owner.textContent('body'), /An invitation was mailed to colleague@example\.test/);
  const code = /svc_inv_\S+/.exec(sink.received.at(-1)?.parsed.text ?? '')?.[0] ?? '';
  t.match(code, /^svc_inv_/, 'the invitation code arrives by mail');

  // The colleague, in a browser of their own.
  const colleague = await (await browser.newContext()).newPage();
  await colleague.goto(`${issuer}/dashboard/join`);
  await colleague.getByLabel('Invitation code').fill(code);
  await colleague.getByLabel(/^Password \(/).fill('first passphrase');
  await colleague.getByLabel('Password again').fill('first passphrase');
  await colleague.getByRole('button', { name: 'Join' }).click();
  await colleague.waitForURL(/\/dashboard\/team\?joined=1/);
  t.match(await colleague.textContent('body'), /you joined the team/);
  t.match(await colleague.textContent('body'), /colleague@example\.test \(you\)admin/, 'signed in as themselves, an admin');
  await colleague.getByLabel('Current password').fill('first passphrase');
  await colleague.getByLabel(/^New password \(/).fill('my own passphrase');
  await colleague.getByLabel('New password again').fill('my own passphrase');
  await colleague.getByRole('button', { name: 'Change password' }).click();
  await colleague.waitForURL(/\/dashboard\/team\?password=changed/);
  t.match(await colleague.textContent('body'), /Your password was changed/, 'still signed in, told so');

  // The owner sees the colleague listed and removes them; the colleague's next page asks to sign in.
  await owner.goto(`${issuer}/dashboard/team`);
  t.match(await owner.textContent('body'), /colleague@example\.test/);
  await owner.getByRole('button', { name: 'Remove colleague@example.test' }).click();
  await owner.waitForURL(`${issuer}/dashboard/team`);
  t.notMatch(await owner.textContent('body'), /colleague@example\.test/, 'no longer listed');
  await colleague.goto(`${issuer}/dashboard`);
  t.match(colleague.url(), /\/dashboard\/sign-in/, 'the removed colleague is signed out');
});
