import { randomBytes } from 'node:crypto';
import { CLEAN_TEXT_MESSAGE, isBlank, isCleanText } from '../../domain/text.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONVERSATION_STATUSES, type ConversationStatus } from '../../domain/conversation.ts';
import { ServiceError } from '../../domain/errors.ts';
import { IDEMPOTENCY_KEY_SHAPE } from '../../domain/ingestion.ts';
import { type ConversationDoc, listConversationsPage } from '../../readModels/conversations.ts';
import { listMessagesOfConversation } from '../../readModels/messages.ts';
import { getOpportunity } from '../../readModels/opportunities.ts';
import { type SiteDoc, listSitesOfTeam } from '../../readModels/sites.ts';
import { httpStatusOf } from '../errorHandler.ts';
import { type ConversationAction, type FoundConversation, actOnConversation, conversationOnSite, replyAsPerson } from '../inboxActions.ts';
import { decodeCursor, pageOf } from '../pagination.ts';
import { firstProblem, formText, parseForm, typedIn } from '../web/forms.ts';
import { type SafeHtml, html } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';
import { showSignedIn, siteNotLicensedPage } from './show.ts';
import { actingFor } from '../actingFor.ts';

const PAGE_SIZE = 25;

// Worded for a person who edited the address (zod said "Invalid input", or "expected string, received array").
const ONE_SITE = 'Choose one site.';
const BROKEN_LINK = 'The page link is broken; start again from the first page.';
const listQuery = z.object({
  site: z.string({ error: ONE_SITE }).max(100, ONE_SITE).optional(),
  status: z.enum([...CONVERSATION_STATUSES, ''], { error: `Choose a status: ${CONVERSATION_STATUSES.join(', ')}.` }).optional(),
  cursor: z.string({ error: BROKEN_LINK }).max(1_000, BROKEN_LINK).optional(),
});

const REPLY_TEXT = 'Write a reply of 1 to 20 000 characters.';
const replyForm = z.object({
  text: formText.pipe(z.string().max(20_000, REPLY_TEXT).refine((s) => !isBlank(s), REPLY_TEXT).refine(isCleanText, `The reply ${CLEAN_TEXT_MESSAGE}.`)),
  // A fresh key per rendered form: a double submit sends the reply once.
  idempotency_key: formText.pipe(z.string().regex(IDEMPOTENCY_KEY_SHAPE, 'The form is stale. Reload the page and try again.')),
});
const statusForm = z.object({ status: formText.pipe(z.enum(CONVERSATION_STATUSES, { error: 'Choose a status.' })) });

const STATUS_LABELS: Record<ConversationStatus, string> = { open: 'Open', resolved: 'Resolved', declined: 'Declined', awaiting_human: 'Awaiting a person' };

type Params = { siteId: string; conversationId: string };

/**
 * The inbox: the team's sites' conversations (filter by status, the API's cursor), a conversation
 * with its messages, opportunity and status history, and the REST actions as forms, calling the same
 * commands (`inboxActions.ts`). Registered inside the signed-in scope of `pages.ts`.
 */
export async function inboxPages(app: FastifyInstance) {
  const teamSite = async (s: SignedIn, siteId: string): Promise<SiteDoc | null> =>
    (await listSitesOfTeam(app.readModels, s.user.teamId, { sortBy: 'createdAt' })).find((x) => x.id === siteId) ?? null;
  const notFoundPage = (reply: FastifyReply, s: SignedIn, what: string) =>
    showSignedIn(reply, s, 'Not found', html`<p class="error" role="alert">${what} not found.</p><p><a href="/dashboard/inbox">Back to the inbox</a></p>`, 404);
  const conversationUrl = (doc: ConversationDoc) => `/dashboard/inbox/${doc.siteId}/${doc.id}`;

  app.get('/dashboard/inbox', async function inboxList(request, reply) {
    const s = request.dashboard!;
    const query = listQuery.safeParse(request.query);
    if (!query.success) return showSignedIn(reply, s, 'Inbox', html`<p class="error" role="alert">${firstProblem(query.error)}</p>`, 400);
    const sites = await listSitesOfTeam(app.readModels, s.user.teamId, { sortBy: 'createdAt' });
    if (sites.length === 0) return showSignedIn(reply, s, 'Inbox', html`<p>The team has no sites.</p>`);
    // By default the first site with a licence; an unlicensed one asked for by name is refused, as on REST.
    const site = query.data.site ? sites.find((x) => x.id === query.data.site) : (sites.find((x) => x.licensed) ?? sites[0]);
    if (!site) return notFoundPage(reply, s, 'Site');
    if (!site.licensed) return siteNotLicensedPage(reply, s, site.domain);
    let after;
    try {
      after = decodeCursor(query.data.cursor);
    } catch (error) {
      if (error instanceof ServiceError) return showSignedIn(reply, s, 'Inbox', html`<p class="error" role="alert">${error.message}</p>`, 400);
      throw error;
    }
    const status = query.data.status || undefined;
    const docs = await listConversationsPage(app.readModels, site.id, status ? { status } : {}, after, PAGE_SIZE);
    const page = pageOf(docs, PAGE_SIZE, 'createdAt');
    const next = page.nextCursor ? `/dashboard/inbox?${new URLSearchParams({ site: site.id, status: status ?? '', cursor: page.nextCursor })}` : null;
    const rows = page.items.map(
      (c) => html`<tr class="${c.unread ? 'unread' : ''}">
        <td>${c.unread ? html`<strong class="marker" aria-label="unread">● Unread</strong>` : html`<span class="marker">Read</span>`}</td>
        <td><a href="${conversationUrl(c)}">${c.subject || '(no subject)'}</a></td>
        <td>${c.contactName ? `${c.contactName} <${c.contactEmail}>` : c.contactEmail}</td>
        <td>${STATUS_LABELS[c.status as ConversationStatus] ?? c.status}</td><td>${c.handledBy === 'human' ? 'a person' : 'the agent'}</td>
        <td>${c.messageCount}</td><td>${c.lastMessageAt}</td></tr>`,
    );
    return showSignedIn(
      reply,
      s,
      'Inbox',
      html`<form method="get" action="/dashboard/inbox" class="filters">
          <label for="site">Site</label><select id="site" name="site">${sites.map((x) => html`<option value="${x.id}" ${x.id === site.id ? html`selected` : ''}>${x.domain} (${x.id})</option>`)}</select>
          <label for="status">Status</label><select id="status" name="status"><option value="">Any status</option>${CONVERSATION_STATUSES.map(
            (st) => html`<option value="${st}" ${st === status ? html`selected` : ''}>${STATUS_LABELS[st]}</option>`,
          )}</select>
          <button type="submit">Filter</button>
        </form>
        ${
          rows.length
            ? html`<table id="conversations"><thead><tr><th></th><th>Subject</th><th>Contact</th><th>Status</th><th>Handled by</th><th>Messages</th><th>Last message</th></tr></thead><tbody>${rows}</tbody></table>`
            : html`<p>No conversations${status ? html` with status ${STATUS_LABELS[status]}` : ''}.</p>`
        }
        ${after ? html`<p><a href="/dashboard/inbox?${new URLSearchParams({ site: site.id, status: status ?? '' }).toString()}">Newest conversations</a></p>` : ''}
        ${next ? html`<p><a href="${next}" rel="next">Older conversations</a></p>` : ''}`,
    );
  });

  /**
   * The conversation; after a refused action, its message, and a refused reply's text back in the
   * form under the key it was sent with (`key`): sent again, it is one reply, should the first have
   * been recorded after all (a failure after the mail left).
   */
  const conversationPage = async (
    reply: FastifyReply,
    s: SignedIn,
    found: FoundConversation,
    notice?: { error: string; status: number; typed?: string; key?: string },
  ) => {
    const { doc } = found;
    const [messages, opportunity] = await Promise.all([
      listMessagesOfConversation(app.readModels, doc.siteId, doc.id),
      getOpportunity(app.readModels, doc.opportunityId),
    ]);
    const base = conversationUrl(doc);
    const button = (action: string, label: string, fields: SafeHtml | '' = '') =>
      html`<form method="post" action="${base}/${action}" class="action"><input type="hidden" name="csrf" value="${s.csrf}">${fields}<button type="submit">${label}</button></form>`;
    const statusButton = (status: ConversationStatus, label: string) => button('status', label, html`<input type="hidden" name="status" value="${status}">`);
    const history = doc.statusHistory ?? [];
    return showSignedIn(
      reply,
      s,
      doc.subject || '(no subject)',
      html`${notice ? html`<p class="error" role="alert">${notice.error}</p>` : ''}
        <p><a href="/dashboard/inbox?site=${doc.siteId}">Back to the inbox</a></p>
        <dl id="summary">
          <dt>Contact</dt><dd>${doc.contactName ? `${doc.contactName} <${doc.contactEmail}>` : doc.contactEmail}</dd>
          <dt>Status</dt><dd id="status">${STATUS_LABELS[doc.status as ConversationStatus] ?? doc.status}</dd>
          <dt>Read</dt><dd id="unread">${doc.unread ? 'Unread' : 'Read'}</dd>
          <dt>Handled by</dt><dd id="handled-by">${doc.handledBy === 'human' ? 'a person (the agent stays out)' : 'the Outreach Agent'}</dd>
          <dt>Opened</dt><dd>${doc.createdAt}</dd>
        </dl>
        <div class="actions">
          ${doc.status !== 'resolved' ? statusButton('resolved', 'Resolve') : ''}
          ${doc.status !== 'declined' ? statusButton('declined', 'Decline') : ''}
          ${doc.status !== 'open' ? statusButton('open', 'Reopen') : ''}
          ${doc.handledBy === 'human' ? button('handback', 'Hand back to the agent') : button('takeover', 'Take over')}
          ${doc.unread ? button('read', 'Mark read') : button('unread', 'Mark unread')}
        </div>
        <h2>Opportunity</h2>
        ${
          opportunity && opportunity.siteId === doc.siteId
            ? opportunity.stub
              ? html`<p>No link request was extracted from this message.</p>`
              : html`<dl id="opportunity"><dt>Target URL</dt><dd>${opportunity.targetUrl}</dd><dt>Anchor text</dt><dd>${opportunity.anchorText ?? '—'}</dd>
                  <dt>Suggested sentence</dt><dd>${opportunity.suggestedSentence ?? '—'}</dd><dt>On page</dt><dd>${opportunity.sourceUrl ?? '—'}</dd><dt>Entry</dt><dd>${opportunity.entrySource}</dd></dl>`
            : html`<p>None.</p>`
        }
        <h2>Messages</h2>
        <ol id="messages">${messages.map(
          (m) => html`<li class="message ${m.direction}">
            <p><strong>${m.direction === 'inbound' ? 'From' : 'Sent by'} ${m.fromName ? `${m.fromName} <${m.from}>` : m.from}</strong>
              (${m.senderType === 'recipient' ? 'the prospect' : m.senderType === 'agent' ? 'the Outreach Agent' : 'a person'})
              ${m.to ? html` to ${m.to}` : ''} at ${m.receivedAt}${m.deliveryStatus ? html`, <span class="delivery">${m.deliveryStatus}</span>` : ''}</p>
            <p><em>${m.subject}</em></p>
            <pre class="body">${m.bodyText}</pre>
          </li>`,
        )}</ol>
        <h2>Reply</h2>
        <form method="post" action="${base}/reply">
          <input type="hidden" name="csrf" value="${s.csrf}">
          <input type="hidden" name="idempotency_key" value="${notice?.key ?? randomBytes(16).toString('base64url')}">
          <label for="reply_text">Your reply to ${doc.contactEmail}</label><textarea id="reply_text" name="text" rows="6" maxlength="20000" required>${notice?.typed ?? ''}</textarea>
          <button type="submit">Send reply</button>
        </form>
        <h2>Status history</h2>
        ${
          history.length
            ? html`<table id="history"><thead><tr><th>When</th><th>From</th><th>To</th><th>By</th><th>Outcome</th></tr></thead><tbody>${history.map(
                (h) => html`<tr><td>${h.at}</td><td>${h.from}</td><td>${h.to}</td><td>${h.by}</td><td>${h.outcome ?? ''}</td></tr>`,
              )}</tbody></table>`
            : html`<p>No status changes yet.</p>`
        }`,
      notice?.status ?? 200,
    );
  };

  /** The path's conversation, on a site of the signed-in user's team; null answers 404. */
  const findConversation = async (s: SignedIn, params: Params) => {
    const site = await teamSite(s, params.siteId);
    const found = site ? await conversationOnSite(app, site.id, params.conversationId) : null;
    return site && found ? { site, found } : null;
  };

  app.get('/dashboard/inbox/:siteId/:conversationId', async function inboxConversation(request: FastifyRequest<{ Params: Params }>, reply) {
    const s = request.dashboard!;
    const hit = await findConversation(s, request.params);
    if (!hit) return notFoundPage(reply, s, 'Conversation');
    return conversationPage(reply, s, hit.found);
  });

  /** Runs an action, then shows the conversation as it is after it (303), or again with the refusal. */
  const act = (name: string, run: (request: FastifyRequest<{ Params: Params }>, s: SignedIn, hit: { site: SiteDoc; found: FoundConversation }) => Promise<{ position: bigint | null } | { problem: string }>) =>
    app.post(`/dashboard/inbox/:siteId/:conversationId/${name}`, async function inboxAction(request: FastifyRequest<{ Params: Params }>, reply) {
      const s = request.dashboard!;
      const hit = await findConversation(s, request.params);
      if (!hit) return notFoundPage(reply, s, 'Conversation');
      const form = typedIn(request.body);
      const typed = form.text('text');
      const sentKey = form.text('idempotency_key');
      const key = sentKey && IDEMPOTENCY_KEY_SHAPE.test(sentKey) ? sentKey : undefined;
      const refused = async (error: ServiceError, again: { typed?: string; key?: string }) => {
        const fresh = (await conversationOnSite(app, hit.site.id, hit.found.doc.id)) ?? hit.found;
        return conversationPage(reply, s, fresh, { error: error.message, status: httpStatusOf(error.code), ...again });
      };
      let done: Awaited<ReturnType<typeof run>>;
      try {
        done = await run(request, s, hit);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        // The form's key sent another reply already (the browser's Back, then an edit): this text is a new reply.
        if (error.code === 'IDEMPOTENCY_KEY_REUSED') return refused(error, { typed });
        return refused(error, { typed, key });
      }
      if ('problem' in done) return conversationPage(reply, s, hit.found, { error: done.problem, status: 400, typed, key });
      try {
        await app.waitForWrite(done.position);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        // The action is recorded (the page says so), only not shown yet: nothing to send again.
        return refused(error, {});
      }
      return reply.redirect(conversationUrl(hit.found.doc), 303);
    });

  act('reply', async (request, s, { site, found }) => {
    const form = parseForm(replyForm, request.body);
    if (!form.success) return { problem: firstProblem(form.error) };
    return replyAsPerson(actingFor(app, request), { found, site, text: form.data.text, idempotency: { scope: `dashboard_user:${s.user.id}`, key: form.data.idempotency_key } });
  });
  act('status', async (request, s, { found }) => {
    const form = parseForm(statusForm, request.body);
    if (!form.success) return { problem: firstProblem(form.error) };
    return actOnConversation(actingFor(app, request), found, { type: 'status', status: form.data.status, resolutionOutcome: 'manual' }, s.user.id);
  });
  for (const type of ['takeover', 'handback', 'read', 'unread'] as const satisfies ReadonlyArray<ConversationAction['type']>) {
    act(type, (request, s, { found }) => actOnConversation(actingFor(app, request), found, { type }, s.user.id));
  }
}
