import { TURN_MAX_WAIT_MS } from '../commands/handleCommand.ts';
import { serviceUnavailable } from '../domain/errors.ts';
import { InTurn } from '../lib/inTurn.ts';

/** Per read-model store (one per process). */
const turnsOf = new WeakMap<object, InTurn>();

/**
 * Runs the writes that a site's limit is checked for (its articles, its webhook subscriptions) one at
 * a time in this process: each checks the read model as the one before it left it (its write waited
 * for), so concurrent requests cannot pass the limit together. API processes in parallel still can,
 * by one each. A turn not come within TURN_MAX_WAIT_MS is 503 SERVICE_UNAVAILABLE (retry).
 */
export function inSiteTurn<T>(readModels: object, resource: string, siteId: string, fn: () => Promise<T>): Promise<T> {
  let turns = turnsOf.get(readModels);
  if (!turns) turnsOf.set(readModels, (turns = new InTurn()));
  return turns.run(`${resource}:${siteId}`, fn, {
    maxWaitMs: TURN_MAX_WAIT_MS,
    onTimeout: () => serviceUnavailable(`Earlier requests on the site's ${resource} are still being written; retry.`, 1),
  });
}
