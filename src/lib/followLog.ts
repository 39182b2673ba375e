import type { EventStore, RecordedEvent } from '../ports/eventStore.ts';
import { sleep } from './sleep.ts';

/**
 * The loop of a follower of the global log (the webhook dispatcher, the Outreach Agent, the departed
 * apps): `step` handles one page and says whether there was one; with nothing new it waits for the
 * next append after `position()` (or a second); a failed step is logged and tried again after a
 * growing pause (50 ms doubling to 5 s), from the checkpoint it had not moved past.
 */
export async function followLog(
  events: Pick<EventStore, 'waitForNew'>,
  follower: { position(): bigint; step(signal: AbortSignal): Promise<boolean> },
  signal: AbortSignal,
  onError: (error: unknown) => void,
): Promise<void> {
  let backoff = 50;
  while (!signal.aborted) {
    try {
      const advanced = await follower.step(signal);
      backoff = 50;
      if (!advanced) await events.waitForNew(follower.position(), 1_000, signal);
    } catch (error) {
      onError(error);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, 5_000);
    }
  }
}

/**
 * A follower whose checkpoint moved past events it does not act on stores it after this long, not
 * with a commit on every append (after a crash it reads them again, acting on none).
 */
export const CHECKPOINT_STORE_EVERY_MS = 5_000;
/** Or once the log has been idle this long (a follower looks at least once a second). */
export const CHECKPOINT_IDLE_STORE_MS = 1_000;

/**
 * A follower's next page: the events of `types` after `from`, and the position the follower reaches
 * with it. A full page reaches its last event; a shorter one holds every event of these types up to
 * the head read before it, so it reaches that head (the other events in between are passed over
 * unread). `to <= from`: nothing new.
 */
export async function readPageOfTypes(
  events: Pick<EventStore, 'headPosition' | 'readAll'>,
  from: bigint,
  limit: number,
  types: readonly string[],
): Promise<{ page: RecordedEvent[]; to: bigint }> {
  const head = await events.headPosition();
  const page = await events.readAll({ after: from, limit, types });
  const last = page.at(-1)?.position ?? -1n;
  return { page, to: page.length === limit || last > head ? last : head };
}
