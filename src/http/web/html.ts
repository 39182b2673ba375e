import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../domain/errors.ts';
import { httpStatusOf } from '../errorHandler.ts';

/** Markup that is already safe; everything else interpolated into `html` is escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);

type Value = SafeHtml | string | number | boolean | null | undefined | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${userText}</p>\`` escapes userText. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
nav a{margin-right:1rem} table{border-collapse:collapse;width:100%} th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
label{display:block;margin:.6rem 0 .2rem} input[type=text],input[type=email],input[type=password],input[type=url],textarea,select{width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.4rem .9rem;margin:.5rem .5rem 0 0} .error{color:#a00000;border-left:4px solid #a00000;padding-left:.6rem}
.secret{font-family:monospace;background:#f3f3f3;padding:.5rem;word-break:break-all} fieldset{border:1px solid #ccc;margin:.8rem 0}
code{background:#f3f3f3;padding:0 .2rem} form.action{display:inline} tr.unread td{font-weight:600} pre.body{white-space:pre-wrap;font:inherit;background:#f7f7f7;padding:.5rem}
ol#messages{padding-left:1.2rem} li.message{margin-bottom:1rem} dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem} dd{margin:0}`;

export function page(title: string, body: SafeHtml, options: { signedIn?: { email: string; csrf: string } } = {}): string {
  const nav = options.signedIn
    ? html`<nav aria-label="Dashboard">
        <a href="/dashboard">Home</a><a href="/dashboard/inbox">Inbox</a><a href="/dashboard/oauth-apps">OAuth apps</a><a href="/dashboard/api-keys">API keys</a><a href="/dashboard/webhooks">Webhooks</a><a href="/dashboard/agents">Agents</a><a href="/dashboard/team">Team</a>
        <form method="post" action="/dashboard/sign-out" style="display:inline"><input type="hidden" name="csrf" value="${options.signedIn.csrf}"><button type="submit">Sign out ${options.signedIn.email}</button></form>
      </nav>`
    : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${render(nav)}<main><h1>${escapeHtml(title)}</h1>${body.value}</main></body></html>`;
}

/** Sends a page with headers that keep it out of caches and frames (consent pages must not be clickjacked). */
export function sendPage(reply: FastifyReply, status: number, document: string) {
  return reply
    .status(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
      // Not no-referrer: a page under that policy posts its forms with `Origin: null`, which the
      // same-origin check (sameOrigin.ts) must refuse where a browser sends no Sec-Fetch-Site.
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
      // Served over https (PUBLIC_BASE_URL): a browser's later first visit must not be downgraded to http.
      ...(reply.server.config.PUBLIC_BASE_URL.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000' } : {}),
    })
    .send(document);
}

/** Paths a browser opens (the dashboard, the consent page): a refusal there is a page, never JSON. */
export const isPagePath = (url: string) => /^\/(dashboard|oauth\/authorize)(\/|\?|$)/.test(url);

/** A refusal as a page, for what fastify answers before any route of the page scopes runs (no such route, a path it cannot read). */
export const sendRefusalPage = (reply: FastifyReply, status: number, message: string) =>
  sendPage(reply, status, page('Something went wrong', html`<p class="error" role="alert">${message}</p>`));

/**
 * The error handler of the browser-facing scopes (dashboard, consent screen): a page, never JSON. A
 * domain error keeps its status and says what it is (a 503 "retry shortly" too); anything else is a 500.
 */
export function sendErrorPage(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if ((error as unknown) instanceof ServiceError) {
    const domain = error as unknown as ServiceError;
    const status = httpStatusOf(domain.code);
    if (status !== 500) {
      if (status > 500) request.log.warn({ err: error }, 'dashboard request refused');
      if (domain.retryAfterSeconds !== null) reply.header('retry-after', String(domain.retryAfterSeconds));
      return sendPage(reply, status, page('Something went wrong', html`<p class="error" role="alert">${domain.message}</p>`));
    }
  }
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
  if (status >= 500) request.log.error({ err: error }, 'dashboard request failed');
  return sendPage(reply, status, page('Something went wrong', html`<p class="error" role="alert">${status >= 500 ? 'The server failed to handle the request.' : error.message}</p>`));
}
