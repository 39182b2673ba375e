import type { FastifyRequest } from 'fastify';
import { type ActingAs, actingAs } from '../commands/context.ts';
import type { Credential } from './credentials.ts';

/** The app acting for a bearer credential (an API key, or an OAuth access token of REST or MCP). */
export const actingForCredential = <T extends object>(app: T, credential: Credential, requestId?: string): T & { actor: ActingAs } =>
  actingAs(app, { kind: credential.kind, id: credential.id }, requestId);

/**
 * The app acting for whoever made the request: its credential (REST, MCP) or the signed-in dashboard
 * user. Commands run on it record that actor in their events' metadata.
 */
export function actingFor<T extends object>(app: T, request: FastifyRequest): T & { actor: ActingAs } {
  if (request.credential) return actingForCredential(app, request.credential, request.id);
  if (request.dashboard) return actingAs(app, { kind: 'dashboard_user', id: request.dashboard.user.id }, request.id);
  throw new Error('actingFor: the request has neither a credential nor a signed-in user');
}
