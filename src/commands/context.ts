import type { Clock } from '../ports/clock.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';

/**
 * Who a command acts for: the API key or OAuth access token of a REST or MCP request, the signed-in
 * dashboard user, or the operator at the CLI. Recorded in the metadata of every event the command
 * appends (`actor`, `actorKind`), so an auditor replaying the log sees who did what. The service's own
 * workers (deliveries, the agents) act for no one: their events carry no actor.
 */
export interface ActingAs {
  kind: 'api_key' | 'oauth_access_token' | 'dashboard_user' | 'operator';
  id: string;
}

/** The ports a command handler may use: the write side reads event streams, never read models. */
export interface CommandContext {
  events: EventStore;
  clock: Clock;
  secrets: SecretBox;
  newId(): string;
  /** Who the command acts for; absent for the service's own workers. */
  actor?: ActingAs;
  /** The HTTP request the command serves (its `X-Request-Id`); absent outside a request. */
  requestId?: string;
}

/**
 * The metadata naming who acted and in which request: `{ actor, actorKind }` when the command acts for
 * someone, `requestId` when it serves an HTTP request (a token grant or a sign-in acts for no one yet).
 */
export const actedBy = (ctx: { actor?: ActingAs; requestId?: string }): { actor?: string; actorKind?: ActingAs['kind']; requestId?: string } => ({
  ...(ctx.actor ? { actor: ctx.actor.id, actorKind: ctx.actor.kind } : {}),
  ...(ctx.requestId ? { requestId: ctx.requestId } : {}),
});

/**
 * The same context (every port and decoration, through its prototype, as fastify's own child
 * instances are made), acting for `actor`, in the request `requestId` when there is one.
 */
export function actingAs<T extends object>(ctx: T, actor: ActingAs, requestId?: string): T & { actor: ActingAs } {
  // Without a request id of its own, the context's (a command acting for someone else within the same request) stands.
  const own: PropertyDescriptorMap = { actor: { value: actor, enumerable: true } };
  if (requestId !== undefined) own['requestId'] = { value: requestId, enumerable: true };
  return Object.create(ctx, own) as T & { actor: ActingAs };
}

/** The same context within the HTTP request `requestId`, for a command that names its actor itself (an invitation's acceptance) or acts for no one (a token grant, a sign-in). */
export function inRequest<T extends object>(ctx: T, requestId: string): T {
  return Object.create(ctx, { requestId: { value: requestId, enumerable: true } }) as T;
}

/** The same context acting for no one and in no request: the service's own housekeeping that a request happened to trigger. */
export function onItsOwn<T extends object>(ctx: T): T {
  return Object.create(ctx, { actor: { value: undefined, enumerable: true }, requestId: { value: undefined, enumerable: true } }) as T;
}
