import type { FastifyInstance } from 'fastify';
import { bearer } from '../helpers/testApp.ts';

export const ACTIONS = ['reply', 'status', 'takeover', 'handback', 'read', 'unread'] as const;
export type Action = (typeof ACTIONS)[number];

export const conversationPath = (siteId: string, conversationId: string) => `/api/v1/sites/${siteId}/outreach/conversations/${conversationId}`;

/** A valid body for each action. */
export const bodyOf = (action: Action): object | undefined =>
  action === 'reply' ? { text: 'Thanks, a person here: happy to talk.' } : action === 'status' ? { status: 'resolved' } : undefined;

/** POSTs one conversation action through the real HTTP stack (inject). */
export function act(
  app: FastifyInstance,
  who: { siteId: string; key: string | null },
  conversationId: string,
  action: Action,
  payload: object | undefined = bodyOf(action),
  headers: Record<string, string> = {},
) {
  return app.inject({
    method: 'POST',
    url: `${conversationPath(who.siteId, conversationId)}/${action}`,
    headers: { ...(who.key ? bearer(who.key) : {}), ...headers },
    ...(payload ? { payload } : {}),
  });
}
