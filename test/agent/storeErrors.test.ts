import t, { type Test } from 'tap';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startAgentHarness } from './helpers.ts';

/**
 * An event-store error in the middle of a reply's send: the step is tried again (after 1 s), without
 * a restart, and the prospect gets the mail once. Before, the reply stayed pending until the worker
 * was restarted (and through SMTP a restart records the outcome as unknown: a person had to decide).
 */

/** The log as the agent worker sees it, where `fails` may turn an operation into an error once (our own port, not a client library). */
function flaky(real: EventStore, fails: { append?: (types: string[]) => boolean; afterAppend?: (types: string[]) => boolean; readStream?: (streamId: string) => boolean }): EventStore {
  const store: EventStore = Object.create(real);
  const background = real.offThreadAppends?.() ?? real;
  store.offThreadAppends = () => store;
  store.append = async (streamId, events, expected) => {
    const types = events.map((e) => e.type);
    if (fails.append?.(types)) throw new Error('SQLITE_IOERR: disk I/O error (injected)');
    const result = await background.append(streamId, events, expected);
    // Stored, then reported as failed (a client's deadline that fires after the commit).
    if (fails.afterAppend?.(types)) throw new Error('DEADLINE_EXCEEDED after the commit (injected)');
    return result;
  };
  store.readStream = async (streamId, options) => {
    if (fails.readStream?.(streamId)) throw new Error('SQLITE_IOERR: disk I/O error (injected)');
    return real.readStream(streamId, options);
  };
  return store;
}

const once = <A extends unknown[]>(when: (...args: A) => boolean) => {
  let done = false;
  return (...args: A) => {
    if (done || !when(...args)) return false;
    return (done = true);
  };
};

/**
 * A pitch answered by an agent worker whose event store fails as `fails` says; resolves once the
 * reply is recorded as sent, with its send events, what the sink received and what was logged.
 */
async function replyThrough(t: Test, harness: Parameters<typeof startAgentHarness>[0], fails: (real: EventStore) => EventStore) {
  const a = await startAgentHarness({ ...harness, startAgent: false });
  t.teardown(() => a.close());
  const errors: unknown[] = [];
  const log = { error: (o: unknown) => errors.push(o), warn: () => {} };
  a.agent = await startAgentWorker({ ...a.h.app.services, events: fails(a.h.app.services.events) }, log);
  const { conversationIds } = await a.pitch();
  await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  const sends = (await a.conversationEvents(conversationIds[0]!)).filter((e) => e.type.startsWith('ReplySen'));
  return { sends, types: sends.map((e) => e.type), received: a.sink.received.length, errors };
}

/** A sink that refuses the first recipient with a 451: the reply's first attempt fails and is retried. */
const greylisting = () => {
  let n = 0;
  return { sink: { rcpt: () => (n++ === 0 ? { code: 451, message: '4.7.1 later' } : null) } };
};

t.test('the outcome of a sent reply fails to be recorded once: recorded on the next try, the mail sent once', async (t) => {
  const r = await replyThrough(t, {}, (real) => flaky(real, { append: once((types: string[]) => types.includes('ReplySent')) }));
  t.equal(r.received, 1, 'the prospect got the reply once');
  t.same(r.types, ['ReplySendAttempted', 'ReplySent'], 'one attempt, recorded as sent without a restart');
  t.ok(r.errors.length >= 1, 'the error was logged');
});

t.test('reading the conversation fails once before the mail left: the step runs again and the mail goes out once', async (t) => {
  // The worker's own reads happen before the claim; the sender's read is the first after ReplySendAttempted.
  let claimed = false;
  const r = await replyThrough(t, {}, (real) =>
    flaky(real, {
      append: (types) => {
        if (types.includes('ReplySendAttempted')) claimed = true;
        return false;
      },
      readStream: once((streamId: string) => claimed && streamId.startsWith('conversation')),
    }),
  );
  t.equal(r.received, 1, 'the prospect got the reply once');
  t.same(r.types, ['ReplySendAttempted', 'ReplySent']);
});

t.test('a retry claimed, then reading the conversation fails once: the claimed attempt is sent, not claimed again', async (t) => {
  let retryClaimed = false;
  let failedOnce = false;
  const r = await replyThrough(t, greylisting(), (real) =>
    flaky(real, {
      append: (types) => {
        if (types.includes('ReplySendFailed')) failedOnce = true;
        else if (types.includes('ReplySendAttempted') && failedOnce) retryClaimed = true;
        return false;
      },
      readStream: once((streamId: string) => retryClaimed && streamId.startsWith('conversation')),
    }),
  );
  t.same(r.types, ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent'], 'two attempts, the second sent');
  t.equal(r.received, 1, 'the prospect got the reply once');
});

t.test('a retry’s claim stored but reported as an error: the claimed attempt is still sent, by this worker', async (t) => {
  let failed = false;
  const r = await replyThrough(t, greylisting(), (real) =>
    flaky(real, {
      append: (types) => {
        if (types.includes('ReplySendFailed')) failed = true;
        return false;
      },
      afterAppend: once((types: string[]) => failed && types.includes('ReplySendAttempted')),
    }),
  );
  t.same(r.types, ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent'], 'the second attempt, claimed once, sent');
  t.equal(r.received, 1, 'the prospect got the reply once');
});

t.test('the store fails for longer than half the orphan time after a claim: the attempt is recorded as not sent and retried under a new claim', async (t) => {
  // Another worker may take an attempt claimed this long ago as abandoned: it is not sent under that claim.
  let claimed = false;
  const r = await replyThrough(t, { env: { AGENT_ORPHAN_AFTER_MS: '1000' } }, (real) =>
    flaky(real, {
      append: (types) => {
        if (types.includes('ReplySendAttempted')) claimed = true;
        return false;
      },
      readStream: once((streamId: string) => claimed && streamId.startsWith('conversation')),
    }),
  );
  t.same(r.types, ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent']);
  t.match(r.sends[1]!.data, { attempt: 1, error: /not sent: the event store failed for too long/ });
  t.equal(r.received, 1, 'the prospect got the reply once');
});
