import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DISPLAY_NAME_MESSAGE, isBlank, isDisplayName } from '../../domain/text.ts';
import { z } from 'zod';
import { switchSiteWebhooks } from '../../commands/tenancy.ts';
import { createSubscription, deleteSubscription, rotateSubscriptionSecret, updateSubscription } from '../../commands/webhookSubscriptions.ts';
import { parseAllowedRanges, webhookUrlProblem } from '../../domain/destination.ts';
import { ServiceError, subscriptionLimitReached } from '../../domain/errors.ts';
import { httpStatusOf } from '../errorHandler.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/eventCatalog.ts';
import { MAX_ROTATION_GRACE_SECONDS } from '../../domain/webhookSubscription.ts';
import { type SiteDoc, getSite } from '../../readModels/sites.ts';
import { listDeliveriesOfSubscription } from '../../readModels/webhookDeliveries.ts';
import { type WebhookSubscriptionDoc, getSubscription, listSubscriptionsForSite } from '../../readModels/webhookSubscriptions.ts';
import { type Typed, firstProblem, formList, formText, parseForm, typedIn } from '../web/forms.ts';
import { type SafeHtml, html } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';
import { sentAgain, siteNotLicensedPage } from './show.ts';
import { onFirstSending, onceField } from '../web/sentOnce.ts';
import { actingFor } from '../actingFor.ts';
import { inSiteTurn } from '../siteTurns.ts';
import { isServiceId } from '../schemas.ts';

const LABEL = 'The label must be 1 to 120 characters.';
const subscriptionForm = z.object({
  label: formText.pipe(z.string().trim().refine((s) => !isBlank(s) && [...s].length <= 120, LABEL).refine(isDisplayName, `The label ${DISPLAY_NAME_MESSAGE}.`)),
  // Trimmed: a pasted URL often carries a space or a line break at an end (the API refuses them).
  url: formText.pipe(z.string().trim().min(1, 'Give the receiver URL.').max(2000, 'The URL must be at most 2000 characters.')),
  event_types: formList.pipe(z.array(z.enum(WEBHOOK_EVENT_TYPES, { error: 'Choose one or more event types.' })).min(1, 'Choose one or more event types.')),
});
const GRACE = `The grace period is 0 to ${MAX_ROTATION_GRACE_SECONDS} seconds.`;
const rotateForm = z.object({
  grace_seconds: formText.pipe(
    z
      .string()
      .regex(/^\d{1,6}$/, GRACE)
      .transform(Number)
      .pipe(z.number().max(MAX_ROTATION_GRACE_SECONDS, GRACE)),
  ),
});
const WEBHOOKS = { href: '/dashboard/webhooks', label: 'Back to webhook subscriptions' };
const switchForm = z.object({ enabled: formText.pipe(z.enum(['on', 'off'])) });

/** How many of a subscription's latest deliveries the page shows with their attempts. */
const RECENT_DELIVERIES = 5;

export interface DashboardKit {
  show(reply: FastifyReply, s: SignedIn, title: string, body: SafeHtml, status?: number): FastifyReply;
  forbidden(reply: FastifyReply, s: SignedIn): FastifyReply;
  canManage(s: SignedIn): boolean;
  sites(s: SignedIn): Promise<SiteDoc[]>;
}

/** The webhooks page: per site the outbound switch, and each subscription created, edited, rotated, deleted, with its recent attempts. */
export async function webhookPages(app: FastifyInstance, kit: DashboardKit) {
  const allowedRanges = parseAllowedRanges(app.config.WEBHOOK_ALLOWED_RANGES);
  const { show, forbidden, canManage, sites } = kit;

  const eventTypeBoxes = (checked: readonly string[]) =>
    WEBHOOK_EVENT_TYPES.map((t) => html`<label><input type="checkbox" name="event_types" value="${t}" ${checked.includes(t) ? 'checked' : ''}> ${t}</label>`);

  async function attemptsOf(sub: WebhookSubscriptionDoc): Promise<SafeHtml> {
    const deliveries = (await listDeliveriesOfSubscription(app.readModels, sub.id)).sort((a, b) => b.scheduled_at.localeCompare(a.scheduled_at)).slice(0, RECENT_DELIVERIES);
    if (deliveries.length === 0) return html`<p>No deliveries yet.</p>`;
    return html`<ul class="attempts">${deliveries.map(
      (d) => html`<li>${d.event_type} ${d.webhook_id}: ${d.state}${d.attempts.map((a) => html`; attempt ${a.attempt} ${a.status} at ${a.attempted_at}`)}</li>`,
    )}</ul>`;
  }

  /**
   * Each site's subscriptions and forms; after a refused create (`siteId`) or edit (`subscriptionId`),
   * `draft` puts what was typed back in that form.
   */
  async function webhooksPage(reply: FastifyReply, s: SignedIn, message?: SafeHtml, status = 200, draft?: Typed & ({ siteId: string } | { subscriptionId: string })) {
    const sections: SafeHtml[] = [];
    const manage = canManage(s);
    for (const site of await sites(s)) {
      // Unlicensed: its subscriptions are shown and may be deleted (its events are still delivered), nothing else.
      const open = site.licensed;
      const typed = draft && 'siteId' in draft && draft.siteId === site.id ? draft : undefined;
      const subs = await listSubscriptionsForSite(app.readModels, site.id, { sortBy: 'created_at' });
      const on = site.webhooksEnabled ?? true;
      const rows: SafeHtml[] = [];
      for (const w of subs) {
        const edited = draft && 'subscriptionId' in draft && draft.subscriptionId === w.id ? draft : undefined;
        const shown = edited ? { label: edited.text('label'), url: edited.text('url'), eventTypes: edited.list('event_types') } : { label: w.label, url: w.url, eventTypes: w.event_types };
        rows.push(html`<tr><td>${w.label}${w.created_by_oauth_client_id ? html`<br><small>created by OAuth client ${w.created_by_oauth_client_id}</small>` : ''}</td><td>${w.url}</td><td>${w.event_types.join(', ')}</td><td>${w.secret_prefix}</td><td>${w.is_active ? 'active' : 'disabled after failures'}</td><td>${w.consecutive_failures}</td>
          <td>${w.last_delivery_status ? html`${w.last_delivery_status} at ${w.last_delivery_at ?? ''}` : 'none yet'}</td>
          <td>${await attemptsOf(w)}</td>
          <td>${
            manage
              ? html`${open && w.is_active ? html`<form method="post" action="/dashboard/webhooks/${w.id}/edit"><input type="hidden" name="csrf" value="${s.csrf}">
                  <label>Label <input name="label" value="${shown.label}" maxlength="120"></label> <label>URL <input name="url" value="${shown.url}" maxlength="2000"></label> ${eventTypeBoxes(shown.eventTypes)}
                  <button type="submit">Save ${w.label}</button></form>
                <form method="post" action="/dashboard/webhooks/${w.id}/rotate"><input type="hidden" name="csrf" value="${s.csrf}">${onceField()}<label>Old secret keeps signing for <input name="grace_seconds" value="3600" size="6"> seconds</label> <button type="submit">Rotate secret of ${w.label}</button></form>` : ''}
                <form method="post" action="/dashboard/webhooks/${w.id}/delete"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Delete ${w.label}</button></form>`
              : ''
          }</td></tr>`);
      }
      sections.push(html`<h2>${site.domain} <small>(${site.id})</small></h2>
        ${open ? '' : html`<p role="status">No active licence: no new subscription or change until the site is licensed again. Its events still go to the subscriptions below, which can be deleted.</p>`}
        <p>Outbound webhooks: <strong>${on ? 'on' : 'off'}</strong>${
          manage && open
            ? html` <form method="post" action="/dashboard/sites/${site.id}/webhooks-switch"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="enabled" value="${on ? 'off' : 'on'}"><button type="submit">Turn ${on ? 'off' : 'on'}</button></form>`
            : ''
        }</p>
        ${
          rows.length
            ? html`<table><thead><tr><th>Label</th><th>URL</th><th>Events</th><th>Secret</th><th>State</th><th>consecutive_failures</th><th>Last delivery</th><th>Recent attempts</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
            : html`<p>No subscriptions.</p>`
        }
        ${
          manage && open
            ? html`<form method="post" action="/dashboard/sites/${site.id}/webhooks"><input type="hidden" name="csrf" value="${s.csrf}">${onceField()}
                <label>Label <input name="label" maxlength="120" value="${typed?.text('label') ?? ''}"></label> <label>URL <input name="url" maxlength="2000" placeholder="https://" value="${typed?.text('url') ?? ''}"></label> ${eventTypeBoxes(typed?.list('event_types') ?? [])}
                <button type="submit">Create subscription on ${site.domain}</button></form>`
            : ''
        }`);
    }
    return show(reply, s, 'Webhook subscriptions', html`${message ?? ''}${sections.length ? html`${sections}` : html`<p>The team has no sites.</p>`}`, status);
  }
  const problem = (reply: FastifyReply, s: SignedIn, text: string, status: number) => webhooksPage(reply, s, html`<p class="error">${text}</p>`, status);

  /**
   * The team's subscription to act on; null once the page that refuses it is sent (404; 403 for an
   * unlicensed site, as REST, unless `unlicensed: 'open'`: a deletion). Not the reply itself: a reply
   * is thenable, and an async function's result would be resolved through it (to undefined).
   */
  async function subscriptionToChange(reply: FastifyReply, s: SignedIn, id: string, unlicensed: 'closed' | 'open' = 'closed'): Promise<WebhookSubscriptionDoc | null> {
    const sub = await teamSubscription(s, id);
    if (!sub) {
      await problem(reply, s, 'Webhook subscription not found.', 404);
      return null;
    }
    const site = await getSite(app.readModels, sub.site_id);
    if (site && !site.licensed && unlicensed === 'closed') {
      await siteNotLicensedPage(reply, s, site.domain);
      return null;
    }
    return sub;
  }

  /** The team's subscription (through its site), or null. */
  async function teamSubscription(s: SignedIn, id: string): Promise<WebhookSubscriptionDoc | null> {
    const sub = isServiceId(id) ? await getSubscription(app.readModels, id) : null;
    return sub && sub.team_id === s.user.teamId ? sub : null;
  }

  async function orProblem(reply: FastifyReply, s: SignedIn, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ServiceError && (error.code === 'NOT_FOUND' || error.code === 'VALIDATION_ERROR' || error.code === 'CONFLICT')) {
        return problem(reply, s, error.message, httpStatusOf(error.code));
      }
      throw error;
    }
  }

  app.get('/dashboard/webhooks', async function webhookSubscriptionsPage(request, reply) {
    return webhooksPage(reply, request.dashboard!);
  });

  app.post('/dashboard/sites/:siteId/webhooks-switch', async function switchWebhooks(request: FastifyRequest<{ Params: { siteId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const site = (await sites(s)).find((x) => x.id === request.params.siteId);
    const form = parseForm(switchForm, request.body);
    if (!site || !form.success) return problem(reply, s, 'Unknown site or switch position.', site ? 400 : 404);
    const { position } = await switchSiteWebhooks(actingFor(app, request), { siteId: site.id, enabled: form.data.enabled === 'on' });
    await app.waitForWrite(position);
    return reply.redirect('/dashboard/webhooks', 303);
  });

  app.post('/dashboard/sites/:siteId/webhooks', async function createWebhookSubscription(request: FastifyRequest<{ Params: { siteId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const site = (await sites(s)).find((x) => x.id === request.params.siteId);
    if (!site) return problem(reply, s, 'Unknown site.', 404);
    const typed = { siteId: site.id, ...typedIn(request.body) };
    const refuse = (text: string, status: number) => webhooksPage(reply, s, html`<p class="error">${text}</p>`, status, typed);
    const form = parseForm(subscriptionForm, request.body);
    if (!form.success) return refuse(firstProblem(form.error), 400);
    const urlProblem = webhookUrlProblem(form.data.url, allowedRanges);
    if (urlProblem) return refuse(urlProblem, 400);
    const limit = app.config.WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE;
    try {
      return await onFirstSending(app, s, request.body, async () => {
        const r = await inSiteTurn(app.readModels, 'webhook subscriptions', site.id, async () => {
          if ((await listSubscriptionsForSite(app.readModels, site.id)).length >= limit) return null;
          const made = await createSubscription(actingFor(app, request), { teamId: s.user.teamId, siteId: site.id, label: form.data.label, url: form.data.url, eventTypes: form.data.event_types, createdByOauthClientId: null });
          await app.waitForWrite(made.position, 'answer');
          return made;
        });
        // Thrown, not answered: a refused sending is forgotten, so this form goes through once one is deleted.
        if (!r) throw subscriptionLimitReached(limit);
        return show(
          reply,
          s,
          'Subscription created',
          html`<p><strong>Copy the signing secret now. It is shown once.</strong></p><p class="secret" id="webhook_secret">${r.secret}</p><p><a href="/dashboard/webhooks">Back to webhook subscriptions</a></p>`,
          201,
        );
      }, () => sentAgain(reply, s, 'the subscription was created', WEBHOOKS));
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'SUBSCRIPTION_LIMIT_REACHED') return refuse(`A site may have at most ${limit} webhook subscriptions.`, 409);
      throw error;
    }
  });

  app.post('/dashboard/webhooks/:id/edit', async function editWebhookSubscription(request: FastifyRequest<{ Params: { id: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const sub = await subscriptionToChange(reply, s, request.params.id);
    if (!sub) return reply;
    if (!sub.is_active) return problem(reply, s, 'This subscription was disabled after repeated failures and stays disabled; create a new one.', 409);
    // A refused edit shows what was typed, as a refused create does (it showed the stored values again).
    const refuse = (text: string, status: number) => webhooksPage(reply, s, html`<p class="error">${text}</p>`, status, { subscriptionId: sub.id, ...typedIn(request.body) });
    const form = parseForm(subscriptionForm, request.body);
    if (!form.success) return refuse(firstProblem(form.error), 400);
    const urlProblem = webhookUrlProblem(form.data.url, allowedRanges);
    if (urlProblem) return refuse(urlProblem, 400);
    return orProblem(reply, s, async () => {
      const { position } = await updateSubscription(actingFor(app, request), { siteId: sub.site_id, subscriptionId: sub.id, changes: { label: form.data.label, url: form.data.url, eventTypes: form.data.event_types } });
      await app.waitForWrite(position);
      return reply.redirect('/dashboard/webhooks', 303);
    });
  });

  app.post('/dashboard/webhooks/:id/rotate', async function rotateWebhookSecret(request: FastifyRequest<{ Params: { id: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const sub = await subscriptionToChange(reply, s, request.params.id);
    if (!sub) return reply;
    if (!sub.is_active) return problem(reply, s, 'This subscription was disabled after repeated failures and stays disabled; create a new one.', 409);
    const form = parseForm(rotateForm, request.body);
    if (!form.success) return problem(reply, s, firstProblem(form.error), 400);
    return orProblem(reply, s, () =>
      onFirstSending(app, s, request.body, async () => {
        const r = await rotateSubscriptionSecret(actingFor(app, request), { siteId: sub.site_id, subscriptionId: sub.id, graceSeconds: form.data.grace_seconds });
        await app.waitForWrite(r.position, 'answer');
        return show(
          reply,
          s,
          'Secret rotated',
          html`<p>${r.previousSecretExpiresAt ? `The old secret keeps signing too until ${r.previousSecretExpiresAt}.` : 'The old secret no longer signs.'}</p>
            <p><strong>Copy the new signing secret now. It is shown once.</strong></p><p class="secret" id="webhook_secret">${r.secret}</p><p><a href="/dashboard/webhooks">Back to webhook subscriptions</a></p>`,
        );
      }, () => sentAgain(reply, s, 'the secret was rotated', WEBHOOKS)),
    );
  });

  app.post('/dashboard/webhooks/:id/delete', async function deleteWebhookSubscription(request: FastifyRequest<{ Params: { id: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const sub = await subscriptionToChange(reply, s, request.params.id, 'open');
    if (!sub) return reply;
    return orProblem(reply, s, async () => {
      const { position } = await deleteSubscription(actingFor(app, request), { siteId: sub.site_id, subscriptionId: sub.id });
      await app.waitForWrite(position);
      return reply.redirect('/dashboard/webhooks', 303);
    });
  });
}
