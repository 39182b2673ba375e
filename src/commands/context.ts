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
}

/** The metadata naming who acted: `{ actor: id, actorKind: kind }`, or nothing. */
export const actedBy = (ctx: { actor?: ActingAs }): { actor?: string; actorKind?: ActingAs['kind'] } =>
  ctx.actor ? { actor: ctx.actor.id, actorKind: ctx.actor.kind } : {};

/**
 * The same context (every port and decoration, through its prototype, as fastify's own child
 * instances are made), acting for `actor`.
 */
export function actingAs<T extends object>(ctx: T, actor: ActingAs): T & { actor: ActingAs } {
  return Object.create(ctx, { actor: { value: actor, enumerable: true } }) as T & { actor: ActingAs };
}

/** The same context acting for no one: the service's own housekeeping that a request happened to trigger. */
export function onItsOwn<T extends object>(ctx: T): T {
  return Object.create(ctx, { actor: { value: undefined, enumerable: true } }) as T;
}
