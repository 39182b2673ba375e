import { randomBytes } from 'node:crypto';
import type { Clock } from '../../ports/clock.ts';
import type { CounterStore } from '../../ports/counterStore.ts';
import { html } from './html.ts';
import type { SignedIn } from './session.ts';

/**
 * A form that creates or rotates a secret shows it on the page its POST answers, once: reloading that
 * page posts the form again, which made a second key or app, or rotated again and killed the secret
 * just copied. Each such form carries a value of its own (`onceField`); the second sending of it is
 * answered with `alreadySent`'s page, and nothing is done.
 */
export const onceField = () => html`<input type="hidden" name="once" value="${randomBytes(16).toString('base64url')}">`;

const ONCE_SHAPE = /^[A-Za-z0-9_-]{22}$/;
/** A reload comes soon after; a day bounds the counters kept. */
const REMEMBERED_MS = 24 * 60 * 60 * 1000;

/**
 * Runs `work` on the form's first sending (counted in the counter store, so every instance agrees),
 * else answers `again()`. Should `work` throw (a refusal: the page shown asks to change something),
 * the sending is forgotten, so the same form may be sent again. A form without the field (a page
 * loaded before it existed, a hand-made request) counts as a first.
 */
export async function onFirstSending<T>(
  ports: { counters: CounterStore; clock: Clock },
  s: SignedIn,
  body: unknown,
  work: () => Promise<T>,
  again: () => T | Promise<T>,
): Promise<T> {
  const once = (body as { once?: unknown } | null)?.once;
  if (typeof once !== 'string' || !ONCE_SHAPE.test(once)) return work();
  const key = `dashboard-form:${s.user.id}:${once}`;
  const expiresAt = new Date(ports.clock.now().getTime() + REMEMBERED_MS);
  if ((await ports.counters.increment(key, 1, expiresAt)) !== 1) return again();
  try {
    return await work();
  } catch (error) {
    await ports.counters.increment(key, -1, expiresAt).catch(() => {});
    throw error;
  }
}

/** The page for a form sent again: what it did the first time stays done, and its secret is not shown again. */
export const alreadySentBody = (what: string, back: { href: string; label: string }) =>
  html`<p class="error" role="alert">This form was already sent: ${what} then, and its secret was shown once on the page that answered it. Nothing was done this time.</p>
    <p><a href="${back.href}">${back.label}</a></p>`;
