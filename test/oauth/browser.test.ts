import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import t from 'tap';
import { bearer } from '../helpers/testApp.ts';
import { PASSWORD, pkce, startOAuthApp, tokenRequest } from './helpers.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Sign-in, app registration and consent clicked through in Debian's Chromium. */
t.test('sign-in and consent in a real browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent (apt-get install -y chromium)` }, async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());

  // The app's callback: a real loopback HTTP server, as a desktop MCP client would run.
  const callbacks: URL[] = [];
  const receiver = createServer((req, res) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    if (url.pathname === '/callback') callbacks.push(url); // not /favicon.ico
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Connected</title><p>You can close this window.</p>');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const redirectUri = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();

  // Sign in to the dashboard and register a public client for a desktop app.
  await page.goto(`${issuer}/dashboard`);
  t.match(page.url(), /\/dashboard\/sign-in/);
  await page.getByLabel('Email').fill(ownerEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${issuer}/dashboard`);
  await page.getByRole('link', { name: 'OAuth apps' }).first().click();
  await page.getByLabel('Name').fill('Desktop MCP client');
  await page.getByLabel(/Redirect URIs/).fill(redirectUri);
  await page.getByLabel(/Public \(none\)/).check();
  await page.getByRole('button', { name: 'Register app' }).click();
  const clientId = (await page.locator('#client_id').textContent())!.trim();
  t.match(clientId, /^svc_[0-9a-f]{24}$/);

  // Sign out, then start the authorization as the app would: the user signs in and comes back.
  await page.goto(`${issuer}/dashboard`);
  await page.getByRole('button', { name: /^Sign out \S+@/ }).click();
  await page.waitForURL(/\/dashboard\/sign-in/);

  const { verifier, challenge } = pkce();
  const url = new URL(`${issuer}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'inbox:read webhooks:read',
    state: 'browser-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  await page.goto(url.toString());
  t.match(page.url(), /\/dashboard\/sign-in\?return_to=/);
  await page.getByLabel('Email').fill(ownerEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/authorize\?/);

  // The consent screen: client name, redirect host, scopes in plain words, the team's sites.
  await t.resolves(page.getByRole('heading', { name: 'Authorize Desktop MCP client' }).waitFor());
  const text = await page.locator('main').innerText();
  t.match(text, new RegExp(`127\\.0\\.0\\.1:${(receiver.address() as AddressInfo).port}`));
  t.match(text, /personal data/);
  t.match(text, /webhooks:read/);
  await page.getByRole('checkbox', { name: /example\.test/ }).check();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(/\/callback\?/);
  t.match(await page.locator('body').innerText(), /close this window/);

  const cb = callbacks.at(-1)!;
  t.equal(cb.searchParams.get('state'), 'browser-state');
  t.equal(cb.searchParams.get('iss'), issuer);
  const code = cb.searchParams.get('code')!;
  t.ok(code);

  const tokens = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: redirectUri, code_verifier: verifier });
  t.equal(tokens.status, 200);
  t.equal(tokens.json.scope, 'inbox:read webhooks:read');
  const list = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: bearer(tokens.json.access_token as string) });
  t.equal(list.status, 200);

  // Deny, clicked: the app gets access_denied.
  await page.goto(url.toString());
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.waitForURL(/\/callback\?/);
  t.equal(callbacks.at(-1)!.searchParams.get('error'), 'access_denied');
});
