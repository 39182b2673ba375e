import type { EventStore, RecordedEvent, SubscribeOptions } from '../../ports/eventStore.ts';
import { sleep } from '../../lib/sleep.ts';

export type PollingSource = Pick<EventStore, 'readAll' | 'waitForNew'>;

const PAGE = 500;

/**
 * A catch-up subscription shared by every adapter: pages through the history after the checkpoint,
 * then waits for new events. On an error it reports it, backs off and resumes after the last event
 * it yielded, so nothing is skipped and nothing is yielded twice.
 */
export async function* catchUpSubscription(source: PollingSource, options: SubscribeOptions = {}): AsyncGenerator<RecordedEvent> {
  let after = options.after ?? -1n;
  let backoffMs = 50;
  const { signal } = options;
  while (!signal?.aborted) {
    let page: RecordedEvent[];
    try {
      page = await source.readAll({ after, limit: PAGE });
      backoffMs = 50;
    } catch (error) {
      options.onError?.(error);
      await sleep(backoffMs, signal);
      backoffMs = Math.min(backoffMs * 2, 5_000);
      continue;
    }
    for (const event of page) {
      if (signal?.aborted) return;
      yield event;
      after = event.position;
    }
    if (page.length < PAGE) {
      try {
        await source.waitForNew(after, 1_000, signal);
      } catch (error) {
        options.onError?.(error);
        await sleep(backoffMs, signal);
      }
    }
  }
}
