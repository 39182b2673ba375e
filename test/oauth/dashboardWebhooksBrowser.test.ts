import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { getSite } from '../../src/readModels/sites.ts';
import { bearer } from '../helpers/testApp.ts';
import { PASSWORD, startOAuthApp } from './helpers.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The webhooks page clicked through in Debian's Chromium: create (secret once), edit, rotate, switch off and on, delete. */
t.test('the dashboard webhooks page in a real browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent (apt-get install -y chromium)` }, async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const api = async () =>
    (await (await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: bearer(tenant.key) })).json()) as { subscriptions: Array<Record<string, any>> };

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });

  await page.goto(`${issuer}/dashboard/webhooks`);
  t.match(page.url(), /\/dashboard\/sign-in\?return_to=%2Fdashboard%2Fwebhooks/);
  await page.getByLabel('Email').fill(ownerEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks`);
  t.match(await page.locator('main').innerText(), /No subscriptions\./);

  // Create: the secret is shown once.
  const create = page.locator(`form[action="/dashboard/sites/${tenant.siteId}/webhooks"]`);
  await create.getByLabel('Label').fill('<b>crm</b>');
  await create.getByLabel('URL').fill('https://hooks.example.com/in');
  await create.getByLabel('outreach.reply_sent').check();
  await create.getByLabel('outreach.message_received').check();
  await create.getByRole('button', { name: /Create subscription on/ }).click();
  await page.waitForURL(`${issuer}/dashboard/sites/${tenant.siteId}/webhooks`);
  const secret = (await page.locator('#webhook_secret').innerText()).trim();
  t.match(secret, /^svc_wh_[A-Za-z0-9_-]+$/, 'the secret is shown');
  const [sub] = (await api()).subscriptions;
  t.same([sub?.label, sub?.url, sub?.event_types], ['<b>crm</b>', 'https://hooks.example.com/in', ['outreach.message_received', 'outreach.reply_sent']]);
  await page.getByRole('link', { name: 'Back to webhook subscriptions' }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks`);
  t.notOk((await page.content()).includes(secret), 'the list never shows the secret again');
  t.equal(await page.locator('main b').count(), 0, 'the label is text');
  const rows = page.locator('tbody tr');
  t.equal(await rows.count(), 1);
  t.match(await rows.nth(0).innerText(), /<b>crm<\/b>[\s\S]*https:\/\/hooks\.example\.com\/in[\s\S]*active/);

  // Edit the URL (and keep the rest).
  const edit = page.locator(`form[action="/dashboard/webhooks/${sub!.id}/edit"]`);
  await edit.getByLabel('URL').fill('https://hooks.example.com/v2');
  await edit.getByRole('button', { name: /^Save / }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks`);
  const edited = (await api()).subscriptions[0]!;
  t.same([edited.label, edited.url, edited.event_types], ['<b>crm</b>', 'https://hooks.example.com/v2', ['outreach.message_received', 'outreach.reply_sent']], 'only the URL changed');
  t.match(await rows.nth(0).innerText(), /https:\/\/hooks\.example\.com\/v2/);

  // An SSRF URL in the browser: refused with the reason on the page.
  await page.locator(`form[action="/dashboard/webhooks/${sub!.id}/edit"]`).getByLabel('URL').fill('https://169.254.169.254/x');
  await page.locator(`form[action="/dashboard/webhooks/${sub!.id}/edit"]`).getByRole('button', { name: /^Save / }).click();
  await t.resolves(page.locator('p.error').waitFor());
  t.equal((await api()).subscriptions[0]!.url, 'https://hooks.example.com/v2', 'the refused edit changed nothing');
  await page.goto(`${issuer}/dashboard/webhooks`);

  // Rotate: a new secret, shown once, and the old one's grace period.
  const rotate = page.locator(`form[action="/dashboard/webhooks/${sub!.id}/rotate"]`);
  await rotate.getByLabel(/Old secret keeps signing for/).fill('600');
  await rotate.getByRole('button', { name: /^Rotate secret of / }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks/${sub!.id}/rotate`);
  const newSecret = (await page.locator('#webhook_secret').innerText()).trim();
  t.match(newSecret, /^svc_wh_/);
  t.not(newSecret, secret, 'a new secret');
  t.match(await page.locator('main').innerText(), /keeps signing too until/);
  t.not((await api()).subscriptions[0]!.secret_prefix, sub!.secret_prefix, 'the prefix follows the new secret');
  await page.getByRole('link', { name: 'Back to webhook subscriptions' }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks`);

  // The per-site switch: off, then on again.
  t.match(await page.locator('main').innerText(), /Outbound webhooks: on/);
  await page.getByRole('button', { name: 'Turn off' }).click();
  await t.resolves(page.getByRole('button', { name: 'Turn on' }).waitFor());
  t.match(await page.locator('main').innerText(), /Outbound webhooks: off/);
  t.equal((await getSite(app.services.readModels, tenant.siteId))?.webhooksEnabled, false, 'switched off');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await t.resolves(page.getByRole('button', { name: 'Turn off' }).waitFor());
  t.match(await page.locator('main').innerText(), /Outbound webhooks: on/);
  t.equal((await getSite(app.services.readModels, tenant.siteId))?.webhooksEnabled, true, 'switched on again');

  // Delete.
  await page.getByRole('button', { name: 'Delete <b>crm</b>' }).click();
  await page.waitForURL(`${issuer}/dashboard/webhooks`);
  await t.resolves(page.getByText('No subscriptions.').waitFor());
  t.same((await api()).subscriptions, [], 'deleted');
  t.same(dialogs, [], 'no script ran');
});
