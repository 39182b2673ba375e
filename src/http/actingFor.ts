import type { FastifyRequest } from 'fastify';
import { type ActingAs, actingAs } from '../commands/context.ts';

/**
 * The app acting for whoever made the request: its credential (REST, MCP) or the signed-in dashboard
 * user. Commands run on it record that actor in their events' metadata.
 */
export function actingFor<T extends object>(app: T, request: FastifyRequest): T & { actor: ActingAs } {
  if (request.credential) return actingAs(app, { kind: request.credential.kind, id: request.credential.id });
  if (request.dashboard) return actingAs(app, { kind: 'dashboard_user', id: request.dashboard.user.id });
  throw new Error('actingFor: the request has neither a credential nor a signed-in user');
}
