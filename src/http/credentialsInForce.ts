import { serviceUnavailable } from '../domain/errors.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { ProjectionRunner } from '../projections/projectionRunner.ts';

/**
 * The projections authentication reads (keys, OAuth tokens and clients, teams and sites): only these
 * must be at the head, so a slow or failing projection elsewhere (the inbox) never holds requests up.
 */
export const CREDENTIAL_PROJECTIONS = ['apiKeys', 'oauth', 'teams', 'sites'] as const;

/**
 * Credential changes are in force at once, with any number of processes: before a bearer credential
 * is looked up in the read models, they are brought up to the store's head as it is now. A key
 * revoked or created by another process (the CLI, the dashboard of another API node) has been
 * appended before its command returned, so it is part of that head. The check is one indexed read
 * (the log's last position) when nothing is pending. When the read models cannot catch up within
 * `timeoutMs` the request is refused with 503 rather than trusted on a stale view.
 */
export function credentialCatchUp(deps: { events: EventStore; projections: ProjectionRunner }, timeoutMs: number): () => Promise<void> {
  return async () => {
    const head = await deps.events.headPosition();
    if (deps.projections.positionOf(CREDENTIAL_PROJECTIONS) >= head) return;
    if (!(await deps.projections.waitFor(head, timeoutMs, CREDENTIAL_PROJECTIONS))) {
      throw serviceUnavailable('The credential could not be checked against the latest changes; retry shortly.');
    }
  };
}
