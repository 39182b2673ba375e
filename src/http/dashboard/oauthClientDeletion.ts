import { deleteOAuthClient, sweepDeletedOAuthClient } from '../../commands/oauth.ts';
import type { CommandContext } from '../../commands/context.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { holdingsOfClient } from '../../readModels/userHoldings.ts';
import { latestPosition } from '../../lib/latestPosition.ts';

/**
 * Deletes a client, revokes its grants and deletes the webhook subscriptions it created.
 * `readModelsAt` waits until the read models include a position: the sweep must see every
 * subscription appended before the deletion. One appended after it is undone by
 * `undoIfClientDeleted`, which the create path runs after its own append, so none survives.
 */
export async function deleteOAuthClientAndSweep(
  services: CommandContext & { readModels: ReadModelStore },
  input: { clientId: string; teamId: string; userId: string },
  readModelsAt: (position: bigint) => Promise<void>,
) {
  const deleted = await deleteOAuthClient(services, input);
  // Best effort when the read models lag beyond the wait: the deletion itself already stands.
  if (deleted.position !== null) await readModelsAt(deleted.position).catch(() => {});
  const leftovers = await holdingsOfClient(services.readModels, input.clientId);
  const swept = await sweepDeletedOAuthClient(services, input.clientId, leftovers);
  return { position: latestPosition(swept.position, deleted.position), revokedGrants: true, deletedSubscriptions: leftovers.subscriptions.length };
}
