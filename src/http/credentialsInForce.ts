import { serviceUnavailable } from '../domain/errors.ts';
import type { EventStore } from '../ports/eventStore.ts';
import { CREDENTIAL_MARK, CREDENTIAL_PROJECTIONS } from '../projections/credentialProjections.ts';
import type { ProjectionRunner } from '../projections/projectionRunner.ts';

export { CREDENTIAL_PROJECTIONS };

/**
 * Credential changes are in force at once, with any number of processes: before a bearer credential
 * is looked up in the read models, the credential projections are brought up to the last credential
 * event in the store as it is now (the store's credential mark: the last event of a type those
 * projections read; the head where the store keeps no mark). A key revoked or created by another
 * process (the CLI, the dashboard of another API node) has been appended before its command returned,
 * so it is at or before that position. Unrelated appends (ingestions, deliveries) do not move it, so
 * under load a request does not wait for the projections to take in events authentication never
 * reads. The check is one indexed read when nothing is pending. When the read models cannot catch up
 * within `timeoutMs` the request is refused with 503 rather than trusted on a stale view.
 */
export function credentialCatchUp(
  deps: { events: EventStore; projections: Pick<ProjectionRunner, 'positionOf' | 'waitFor'> },
  timeoutMs: number,
): () => Promise<void> {
  return async () => {
    const target = (await deps.events.markPosition?.(CREDENTIAL_MARK)) ?? (await deps.events.headPosition());
    if (deps.projections.positionOf(CREDENTIAL_PROJECTIONS) >= target) return;
    if (!(await deps.projections.waitFor(target, timeoutMs, CREDENTIAL_PROJECTIONS))) {
      throw serviceUnavailable('The credential could not be checked against the latest changes; retry shortly.');
    }
  };
}
