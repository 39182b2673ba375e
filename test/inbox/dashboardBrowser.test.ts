import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import { PASSWORD } from '../oauth/helpers.ts';
import { HOSTILE, startInboxDashboard } from './dashboardHelpers.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The inbox clicked through in Debian's Chromium: sign in, open a conversation, reply, resolve, mark unread. */
t.test('the dashboard inbox in a real browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is absent (apt-get install -y chromium)` }, async (t) => {
  const d = await startInboxDashboard();
  t.teardown(() => d.close());
  const hostile = await d.pitch(HOSTILE);
  const id = await d.pitch({ from: 'jane@prospect.io', subject: 'A link for your SEO article' });

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

  await page.goto(`${d.issuer}/dashboard/inbox`);
  t.match(page.url(), /\/dashboard\/sign-in\?return_to=%2Fdashboard%2Finbox/);
  await page.getByLabel('Email').fill(d.ownerEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${d.issuer}/dashboard/inbox`);

  // The list: both conversations, unread, the hostile subject shown as text.
  const rows = page.locator('#conversations tbody tr');
  t.equal(await rows.count(), 2);
  t.match(await rows.nth(0).innerText(), /Unread[\s\S]*A link for your SEO article[\s\S]*jane@prospect\.io[\s\S]*Open/);
  t.match(await rows.nth(1).innerText(), HOSTILE.subject, 'the <script> subject is text');
  t.equal(await page.locator('main script, main img, main b').count(), 0, 'no element from the pitch');

  // The hostile conversation: its title, sender and body are text too; nothing ran.
  await page.getByRole('link', { name: HOSTILE.subject }).click();
  await page.waitForURL(new RegExp(`/dashboard/inbox/${d.tenant.siteId}/${hostile}$`));
  t.equal(await page.title(), HOSTILE.subject);
  t.match(await page.locator('#messages').innerText(), HOSTILE.bodyText);
  t.equal(await page.locator('main script, main img').count(), 0);
  await page.getByRole('link', { name: 'Back to the inbox' }).click();

  // Open the other one and reply: the mail reaches the SMTP sink.
  await page.getByRole('link', { name: 'A link for your SEO article' }).click();
  await page.waitForURL(new RegExp(`/dashboard/inbox/${d.tenant.siteId}/${id}$`));
  t.match(await page.locator('#opportunity').innerText(), /prospect\.io\/schema-guide/);
  await page.getByLabel(/Your reply to/).fill('Hi Jane,\n\nHappy to add it.\n\nAna');
  await page.getByRole('button', { name: 'Send reply' }).click();
  await page.waitForURL(new RegExp(`/dashboard/inbox/${d.tenant.siteId}/${id}$`));
  t.equal(d.sink.received.length, 1, 'one mail');
  const mail = d.sink.received[0]!;
  t.same(mail.rcptTo, ['jane@prospect.io']);
  t.equal(mail.parsed.subject, 'Re: A link for your SEO article');
  t.match(mail.parsed.text, /Happy to add it/);
  const messages = page.locator('#messages li');
  t.equal(await messages.count(), 2, 'inbound, then the reply');
  t.match(await messages.nth(1).innerText(), /a person[\s\S]*sent[\s\S]*Happy to add it/);

  // Mark read, resolve, then mark unread again.
  await page.getByRole('button', { name: 'Mark read' }).click();
  await t.resolves(page.getByRole('button', { name: 'Mark unread' }).waitFor());
  t.equal(await page.locator('#unread').innerText(), 'Read');
  await page.getByRole('button', { name: 'Resolve' }).click();
  await t.resolves(page.getByRole('button', { name: 'Reopen' }).waitFor());
  t.equal(await page.locator('#status').innerText(), 'Resolved');
  t.match(await page.locator('#history').innerText(), /open\s+resolved\s+user\s+manual/);
  await page.getByRole('button', { name: 'Mark unread' }).click();
  await t.resolves(page.getByRole('button', { name: 'Mark read' }).waitFor());
  t.equal(await page.locator('#unread').innerText(), 'Unread');

  // Back on the list: the status filter finds it.
  await page.getByRole('link', { name: 'Back to the inbox' }).click();
  await page.getByLabel('Status').selectOption('resolved');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/status=resolved/);
  t.equal(await rows.count(), 1);
  t.match(await rows.nth(0).innerText(), /Unread[\s\S]*A link for your SEO article[\s\S]*Resolved/);

  const types = (await d.app.services.events.readStream(conversationStream(id))).map((e) => e.type);
  t.same(types, ['ReplyDrafted', 'ReplySendAttempted', 'ReplySent', 'ConversationMarkedRead', 'ConversationStatusChanged', 'ConversationMarkedUnread']);
  t.same(dialogs, [], 'no script from a pitch ever ran');
});
