import t from 'tap';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startAgentHarness, waitFor } from './helpers.ts';

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

t.test('the outcome of a sent reply fails to be recorded once: recorded on the next try, the mail sent once', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const errors: unknown[] = [];
  const log = { error: (o: unknown) => errors.push(o), warn: () => {} };
  const failsOnce = once((types: string[]) => types.includes('ReplySent'));
  a.agent = await startAgentWorker({ ...a.h.app.services, events: flaky(a.h.app.services.events, { append: failsOnce }) }, log);
  const { conversationIds } = await a.pitch();
  const sent = await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  t.ok(sent, 'recorded without a restart');
  t.equal(a.sink.received.length, 1, 'the prospect got the reply once');
  const types = (await a.conversationEvents(conversationIds[0]!)).map((e) => e.type);
  t.same(types.filter((x) => x === 'ReplySendAttempted'), ['ReplySendAttempted'], 'one attempt');
  t.notOk(types.includes('ReplySendFailed'), 'not recorded as failed');
  t.ok(errors.length >= 1, 'the error was logged');
});

t.test('reading the conversation fails once before the mail left: the step runs again and the mail goes out once', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const log = { error: () => {}, warn: () => {} };
  // The worker's own reads happen before the claim; the sender's read is the first after ReplySendAttempted.
  let claimed = false;
  const store = flaky(a.h.app.services.events, {
    append: (types) => {
      if (types.includes('ReplySendAttempted')) claimed = true;
      return false;
    },
    readStream: once((streamId: string) => claimed && streamId.startsWith('conversation')),
  });
  a.agent = await startAgentWorker({ ...a.h.app.services, events: store }, log);
  const { conversationIds } = await a.pitch();
  await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  await waitFor('the sink', async () => (a.sink.received.length > 0 ? true : undefined), 5_000);
  t.equal(a.sink.received.length, 1, 'the prospect got the reply once');
});

t.test('a retry claimed, then reading the conversation fails once: the claimed attempt is sent, not claimed again', async (t) => {
  let n = 0;
  const a = await startAgentHarness({ startAgent: false, sink: { rcpt: () => (n++ === 0 ? { code: 451, message: '4.7.1 later' } : null) } });
  t.teardown(() => a.close());
  const log = { error: () => {}, warn: () => {} };
  let retryClaimed = false;
  const store = flaky(a.h.app.services.events, {
    append: (types) => {
      if (types.includes('ReplySendFailed')) retryClaimed = false;
      else if (types.includes('ReplySendAttempted') && n > 0) retryClaimed = true;
      return false;
    },
    readStream: once((streamId: string) => retryClaimed && streamId.startsWith('conversation')),
  });
  a.agent = await startAgentWorker({ ...a.h.app.services, events: store }, log);
  const { conversationIds } = await a.pitch();
  await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  const types = (await a.conversationEvents(conversationIds[0]!)).map((e) => e.type);
  t.same(
    types.filter((x) => x.startsWith('ReplySen')),
    ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent'],
    'two attempts, the second sent',
  );
  t.equal(a.sink.received.length, 1, 'the prospect got the reply once');
});

t.test('a retry’s claim stored but reported as an error: the claimed attempt is still sent, by this worker', async (t) => {
  let n = 0;
  const a = await startAgentHarness({ startAgent: false, sink: { rcpt: () => (n++ === 0 ? { code: 451, message: '4.7.1 later' } : null) } });
  t.teardown(() => a.close());
  const log = { error: () => {}, warn: () => {} };
  let failed = false;
  const store = flaky(a.h.app.services.events, {
    append: (types) => {
      if (types.includes('ReplySendFailed')) failed = true;
      return false;
    },
    afterAppend: once((types: string[]) => failed && types.includes('ReplySendAttempted')),
  });
  a.agent = await startAgentWorker({ ...a.h.app.services, events: store }, log);
  const { conversationIds } = await a.pitch();
  await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  const types = (await a.conversationEvents(conversationIds[0]!)).map((e) => e.type);
  t.same(
    types.filter((x) => x.startsWith('ReplySen')),
    ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent'],
    'the second attempt, claimed once, sent',
  );
  t.equal(a.sink.received.length, 1, 'the prospect got the reply once');
});

t.test('the store fails for longer than half the orphan time after a claim: the attempt is recorded as not sent and retried under a new claim', async (t) => {
  // Another worker may take an attempt claimed this long ago as abandoned: it is not sent under that claim.
  const a = await startAgentHarness({ startAgent: false, env: { AGENT_ORPHAN_AFTER_MS: '1000' } });
  t.teardown(() => a.close());
  const log = { error: () => {}, warn: () => {} };
  let claimed = false;
  const store = flaky(a.h.app.services.events, {
    append: (types) => {
      if (types.includes('ReplySendAttempted')) claimed = true;
      return false;
    },
    readStream: once((streamId: string) => claimed && streamId.startsWith('conversation')),
  });
  a.agent = await startAgentWorker({ ...a.h.app.services, events: store }, log);
  const { conversationIds } = await a.pitch();
  await a.waitForEvent(conversationIds[0]!, 'ReplySent', 10_000);
  const events = (await a.conversationEvents(conversationIds[0]!)).filter((e) => e.type.startsWith('ReplySen'));
  t.same(events.map((e) => e.type), ['ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent']);
  t.match(events[1]!.data, { attempt: 1, error: /not sent: the event store failed for too long/ });
  t.equal(a.sink.received.length, 1, 'the prospect got the reply once');
});
