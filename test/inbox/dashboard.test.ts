import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import { getConversation } from '../../src/readModels/conversations.ts';
import { Browser, formFields } from '../oauth/helpers.ts';
import { HOSTILE, startInboxDashboard } from './dashboardHelpers.ts';

const d = await startInboxDashboard();
t.teardown(() => d.close());
const { tenant } = d;
const conversationUrl = (id: string, siteId = tenant.siteId) => `/dashboard/inbox/${siteId}/${id}`;
const eventsOf = async (id: string) => (await d.app.services.events.readStream(conversationStream(id))).map((e) => e.type);

const owner = new Browser(d.issuer);
t.equal((await owner.signIn(d.ownerEmail)).status, 303, 'signed in');

t.test('signed out: the inbox sends to sign-in; an action is refused', async (t) => {
  const anonymous = new Browser(d.issuer);
  const res = await anonymous.request('/dashboard/inbox');
  t.equal(res.status, 303);
  t.match(res.location, /^\/dashboard\/sign-in\?return_to=%2Fdashboard%2Finbox/);
  const id = await d.pitch();
  t.equal((await anonymous.request(`${conversationUrl(id)}/read`, { form: { csrf: 'x' } })).status, 401);
  t.same(await eventsOf(id), [], 'nothing recorded');
});

t.test('attacker-controlled subject, sender and body are escaped on the list and the conversation page', async (t) => {
  const id = await d.pitch(HOSTILE);
  for (const path of ['/dashboard/inbox', conversationUrl(id)]) {
    const page = await owner.request(path);
    t.equal(page.status, 200, path);
    t.notMatch(page.text, /<script>alert/, `${path}: no script element`);
    t.notMatch(page.text, /<img src=x/, `${path}: no img element`);
    t.notMatch(page.text, /<b>bold/, `${path}: no markup`);
    t.match(page.text, '&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;', `${path}: the subject as text`);
    t.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/, `${path}: no script may run anyway`);
  }
  const page = await owner.request(conversationUrl(id));
  t.match(page.text, '&lt;img src=x onerror=alert(1)&gt;', 'the sender name as text');
  t.match(page.text, 'Hello &lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;', 'the body as text');
  t.match(page.text, /<title>&lt;script&gt;/, 'the title too');
});

t.test('the list: unread markers, status filter, pages with the API cursor', async (t) => {
  const site = await d.otherTeam(); // a fresh site keeps the counts exact
  const browser = new Browser(d.issuer);
  await browser.signIn(site.ownerEmail);
  const ids: string[] = [];
  for (let i = 0; i < 27; i++) ids.push(await d.pitch({ from: `p${i}@prospect.io`, subject: `Pitch number ${i}` }, site.tenant));
  const resolved = ids[3]!;
  const form = formFields((await browser.request(conversationUrl(resolved, site.tenant.siteId))).text, `${conversationUrl(resolved, site.tenant.siteId)}/status`);
  t.equal((await browser.request(`${conversationUrl(resolved, site.tenant.siteId)}/status`, { form: { ...form, status: 'resolved' } })).status, 303);
  const read = ids[5]!;
  const readForm = formFields((await browser.request(conversationUrl(read, site.tenant.siteId))).text, `${conversationUrl(read, site.tenant.siteId)}/read`);
  t.equal((await browser.request(`${conversationUrl(read, site.tenant.siteId)}/read`, { form: readForm })).status, 303);

  const first = await browser.request('/dashboard/inbox');
  t.equal(first.status, 200);
  const subjects = (text: string) => [...text.matchAll(/>Pitch number (\d+)</g)].map((m) => Number(m[1]));
  t.same(subjects(first.text), Array.from({ length: 25 }, (_, i) => 26 - i), 'newest first, 25 a page');
  t.equal((first.text.match(/● Unread/g) ?? []).length, 24, 'unread markers: all but the one marked read');
  const next = first.text.match(/<a href="([^"]+)" rel="next">/)![1]!.replace(/&amp;/g, '&');
  const second = await browser.request(next);
  t.same(subjects(second.text), [1, 0], 'the rest on the next page');
  t.notMatch(second.text, /rel="next"/, 'no further page');

  const filtered = await browser.request(`/dashboard/inbox?site=${site.tenant.siteId}&status=resolved`);
  t.same(subjects(filtered.text), [3], 'status filter');
  t.equal((await browser.request('/dashboard/inbox?cursor=garbage')).status, 400, 'a forged cursor');
  // An edited address is answered in words a person reads, not the validator's.
  for (const [query, words] of [['status=bogus', /Choose a status: open, /], ['site=a&site=b', /Choose one site\./]] as const) {
    const res = await browser.request(`/dashboard/inbox?${query}`);
    t.equal(res.status, 400, query);
    t.match(res.text, words);
  }
  t.equal((await browser.request('/dashboard/inbox?status=nope')).status, 400, 'an unknown status');
});

t.test("another team's member sees none of it and can do nothing to it", async (t) => {
  const id = await d.pitch({ subject: 'Only for team A' });
  const other = await d.otherTeam();
  const intruder = new Browser(d.issuer);
  await intruder.signIn(other.ownerEmail);
  t.equal((await intruder.request(conversationUrl(id))).status, 404, 'the conversation');
  t.equal((await intruder.request(`/dashboard/inbox?site=${tenant.siteId}`)).status, 404, "team A's site");
  t.notMatch((await intruder.request('/dashboard/inbox')).text, /Only for team A/, 'not on its own list');
  t.equal((await intruder.request(conversationUrl(id, other.tenant.siteId))).status, 404, 'nor through its own site');
  // Its own session's CSRF token, on team A's conversation.
  const csrf = formFields((await intruder.request('/dashboard')).text, '/dashboard/sign-out').csrf!;
  for (const action of ['read', 'unread', 'takeover', 'handback']) {
    t.equal((await intruder.request(`${conversationUrl(id)}/${action}`, { form: { csrf } })).status, 404, action);
  }
  t.equal((await intruder.request(`${conversationUrl(id)}/status`, { form: { csrf, status: 'resolved' } })).status, 404, 'status');
  t.equal((await intruder.request(`${conversationUrl(id)}/reply`, { form: { csrf, text: 'hi', idempotency_key: 'k1' } })).status, 404, 'reply');
  t.same(await eventsOf(id), [], 'nothing recorded');
});

t.test('an action without the CSRF token is refused', async (t) => {
  const id = await d.pitch();
  t.equal((await owner.request(`${conversationUrl(id)}/read`, { form: { csrf: 'forged' } })).status, 403);
  t.equal((await owner.request(`${conversationUrl(id)}/read`, { form: {} })).status, 403);
  t.same(await eventsOf(id), []);
});

t.test('every action through its form: the same commands and events as the REST actions; a reply reaches the SMTP sink', async (t) => {
  const id = await d.pitch({ subject: 'Form actions' });
  const url = conversationUrl(id);
  const post = async (action: string, extra: Record<string, string> = {}) => {
    const fields = formFields((await owner.request(url)).text, `${url}/${action}`);
    return owner.request(`${url}/${action}`, { form: { ...fields, ...extra } });
  };
  const expectRedirect = async (action: string, extra?: Record<string, string>) => {
    const res = await post(action, extra);
    t.equal(res.status, 303, action);
    t.equal(res.location, url, `${action}: back to the conversation`);
  };

  await expectRedirect('read');
  await expectRedirect('unread');
  await expectRedirect('takeover');
  t.equal((await getConversation(d.app.services.readModels, id))!.handledBy, 'human');
  await expectRedirect('handback');
  const resolve = formFields((await owner.request(url)).text, `${url}/status`);
  t.equal(resolve.status, 'resolved', 'the first status button resolves');
  await expectRedirect('status');
  const decline = await owner.request(`${url}/status`, { form: { ...resolve, status: 'declined' } });
  t.equal(decline.status, 303, 'decline');

  const replyFields = formFields((await owner.request(url)).text, `${url}/reply`);
  const before = d.sink.received.length;
  const replied = await owner.request(`${url}/reply`, { form: { ...replyFields, text: 'Hi Jane,\n\nA person here: glad to add it.' } });
  t.equal(replied.status, 303, 'reply');
  const again = await owner.request(`${url}/reply`, { form: { ...replyFields, text: 'Hi Jane,\n\nA person here: glad to add it.' } });
  t.equal(again.status, 303, 'a double submit');
  t.equal(d.sink.received.length, before + 1, 'one mail reached the sink');
  const mail = d.sink.received.at(-1)!;
  t.same(mail.rcptTo, ['jane@prospect.io']);
  t.equal(mail.parsed.subject, 'Re: Form actions');
  t.match(mail.parsed.text, /glad to add it/);

  t.same(await eventsOf(id), [
    'ConversationMarkedRead',
    'ConversationMarkedUnread',
    'ConversationTakenOver',
    'ConversationHandedBack',
    'ConversationStatusChanged',
    'ConversationStatusChanged',
    'ReplyDrafted',
    'ReplySendAttempted',
    'ReplySent',
  ]);
  const events = await d.app.services.events.readStream(conversationStream(id));
  t.match(events[4]!.data, { newStatus: 'resolved', resolvedBy: 'user', resolutionOutcome: 'manual' });
  t.match(events[5]!.data, { newStatus: 'declined', resolvedBy: 'user' });
  t.match(events[6]!.data, { senderType: 'user', drafter: 'user' });

  const view = await owner.request(url);
  t.match(view.text, /id="status">Declined</);
  t.match(view.text, /glad to add it/, 'the reply is in the conversation');
  t.match(view.text, /a person\)[\s\S]*sent/, 'as a person, sent');
  const messages = [...view.text.matchAll(/<li class="message (inbound|outbound)">/g)].map((m) => m[1]);
  t.same(messages, ['inbound', 'outbound'], 'oldest first');
  t.match(view.text, /<table id="history">[\s\S]*open[\s\S]*resolved[\s\S]*resolved[\s\S]*declined/, 'status history');
  t.match(view.text, /schema-guide/, 'the opportunity');

  const blank = await owner.request(`${url}/reply`, { form: { ...formFields(view.text, `${url}/reply`), text: '   ' } });
  t.equal(blank.status, 400, 'a blank reply');
  t.match(blank.text, /Write a reply/);
  const unknown = await owner.request(`${url}/status`, { form: { ...formFields(view.text, `${url}/status`), status: 'closed' } });
  t.equal(unknown.status, 400, 'an unknown status');
});
