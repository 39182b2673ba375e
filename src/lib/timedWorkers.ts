import { type Transferable, Worker, parentPort } from 'node:worker_threads';

/**
 * Why a run did not give its result:
 * - `over_budget`: past its time budget (its thread was ended);
 * - `over_memory`: past its heap limit (its thread ended);
 * - `failed`: it threw, or its thread died while running it;
 * - `queue_full`: too many runs waiting already (try later);
 * - `abandoned`: its caller's signal aborted (its thread, if it had one, was ended);
 * - `closed`: the threads are closing.
 * The first three are the input's doing (the time budget a busy machine may stretch too).
 */
export class TimedWorkError extends Error {
  override name = 'TimedWorkError';
  constructor(
    readonly reason: 'over_budget' | 'over_memory' | 'failed' | 'queue_full' | 'abandoned' | 'closed',
    message: string,
  ) {
    super(message);
  }
}

export interface TimedWorkers<I, O> {
  /**
   * Runs `input` on the first free thread; the budget counts from the moment a thread takes it.
   * `key` (a client's address) shares the threads fairly: the keys take turns (a new one at the back),
   * and one key may have at most `maxQueuedPerKey` waiting.
   */
  run(input: I, options?: { signal?: AbortSignal; transfer?: readonly Transferable[]; key?: string }): Promise<O>;
  /** Refuses what is queued or running and ends the threads. */
  close(): Promise<void>;
}

export interface TimedWorkersOptions {
  threads: number;
  /** A run longer than this ends its thread (a new one takes its place): `over_budget`. */
  timeoutMs: number;
  /** The V8 heap limit of each thread, in MiB: a run that needs more ends its thread (`over_memory`). */
  maxHeapMb: number;
  /** Runs that may wait for a thread; more are refused at once (`queue_full`). */
  maxQueued: number;
  /** Runs of one key that may wait (default maxQueued). */
  maxQueuedPerKey?: number;
  /** A thread's failure that no run is waiting for (it failed to start). */
  onError?: (error: unknown) => void;
}

type Task = { input: unknown; transfer: readonly Transferable[]; signal?: AbortSignal; key: string; resolve(value: unknown): void; reject(error: unknown): void };
type Reply = { kind: 'ready' } | { kind: 'done'; value: unknown } | { kind: 'failed'; message: string };
/** `ending`: this side ended the thread (budget, abandon), so it is replaced at once; any other exit backs off. */
type Slot = { worker: Worker; ready: boolean; ending: boolean; task: Task | null; timer?: NodeJS.Timeout };

/**
 * A few worker threads that each run one piece of work at a time under a time budget and a memory
 * limit, for parsers whose cost an input can make grow faster than the input itself. A thread is
 * ended, not asked, when its run is over budget (a synchronous loop does not listen), and replaced.
 * The thread's module calls serveTimedWork. Unlike a general pool (piscina's abort signal counts
 * time spent queued), the budget counts only the run.
 */
export function startTimedWorkers<I, O>(entry: URL, options: TimedWorkersOptions): TimedWorkers<I, O> {
  const queue: Task[] = [];
  const slots = new Set<Slot>();
  let closed = false;
  let restartDelay = 100;
  const restarts = new Set<NodeJS.Timeout>();

  const spawn = () => {
    const worker = new Worker(new URL('./tsWorker.js', import.meta.url), {
      execArgv: [],
      workerData: { entry: entry.href },
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    const slot: Slot = { worker, ready: false, ending: false, task: null };
    slots.add(slot);
    worker.on('message', (reply: Reply) => {
      if (reply.kind === 'ready') {
        slot.ready = true;
      } else {
        // A thread that finished a run works: a later crash starts the back-off afresh.
        restartDelay = 100;
        const task = finish(slot);
        if (reply.kind === 'done') task?.resolve(reply.value);
        else task?.reject(new TimedWorkError('failed', reply.message));
      }
      pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const task = finish(slot);
      if (!task) return options.onError?.(error);
      task.reject(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new TimedWorkError('over_memory', `the work needed more than ${options.maxHeapMb} MiB`)
          : new TimedWorkError('failed', `the worker thread failed: ${error.message}`),
      );
    });
    worker.on('exit', () => {
      slots.delete(slot);
      finish(slot)?.reject(closed ? closedError() : new TimedWorkError('failed', 'the worker thread exited'));
      if (closed) return;
      if (slot.ending) return spawn();
      // A thread that keeps dying on its own (a broken install, a crash after start) is restarted less and less often.
      const timer = setTimeout(() => {
        restarts.delete(timer);
        spawn();
      }, restartDelay);
      restarts.add(timer);
      restartDelay = Math.min(restartDelay * 2, 10_000);
    });
    hold();
  };

  // The threads hold the process open while work is queued or running, not while idle.
  const hold = () => {
    const busy = queue.length > 0 || [...slots].some((slot) => slot.task);
    for (const slot of slots) busy ? slot.worker.ref() : slot.worker.unref();
  };

  const finish = (slot: Slot): Task | null => {
    clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = null;
    if (task?.signal) task.signal.removeEventListener('abort', abandon);
    return task;
  };

  const end = (slot: Slot, error: TimedWorkError) => {
    slot.ready = false;
    slot.ending = true;
    finish(slot)?.reject(error);
    void slot.worker.terminate();
  };

  function abandon(this: AbortSignal) {
    const queued = queue.findIndex((task) => task.signal === this);
    if (queued >= 0) queue.splice(queued, 1)[0]!.reject(new TimedWorkError('abandoned', 'the work was abandoned'));
    for (const slot of slots) if (slot.task?.signal === this) end(slot, new TimedWorkError('abandoned', 'the work was abandoned'));
    hold();
  }

  /**
   * Each waiting key's place in the rotation: the tick of its last run taken; a key new to it joins
   * just ahead of the key served last, behind every other (a new address each time does not go first).
   */
  const served = new Map<string, number>();
  let tick = 0;
  /** The oldest waiting run of the key whose turn is oldest: one key's flood waits behind everyone else. */
  const next = (): Task => {
    let best = 0;
    for (let i = 1; i < queue.length; i++) if (served.get(queue[i]!.key)! < served.get(queue[best]!.key)!) best = i;
    const task = queue.splice(best, 1)[0]!;
    served.set(task.key, ++tick);
    // Forget keys with nothing waiting once many were seen (every client address passes here); one
    // forgotten joins at the back again.
    if (served.size > 1_000) for (const key of served.keys()) if (!queue.some((t) => t.key === key)) served.delete(key);
    return task;
  };

  const pump = () => {
    for (const slot of slots) {
      if (queue.length === 0) break;
      if (!slot.ready || slot.task) continue;
      const task = next();
      slot.task = task;
      slot.timer = setTimeout(() => end(slot, new TimedWorkError('over_budget', `the work took more than ${options.timeoutMs} ms`)), options.timeoutMs);
      slot.worker.postMessage(task.input, task.transfer);
    }
    hold();
  };

  const closedError = () => new TimedWorkError('closed', 'the worker threads are closed');

  for (let i = 0; i < options.threads; i++) spawn();
  return {
    run: (input, { signal, transfer = [], key = '' } = {}) =>
      new Promise<O>((resolve, reject) => {
        if (closed) return reject(closedError());
        if (signal?.aborted) return reject(new TimedWorkError('abandoned', 'the work was abandoned'));
        if (queue.length >= options.maxQueued) return reject(new TimedWorkError('queue_full', `${queue.length} runs are waiting for a thread already`));
        const ofKey = queue.filter((task) => task.key === key).length;
        if (ofKey >= (options.maxQueuedPerKey ?? options.maxQueued)) return reject(new TimedWorkError('queue_full', `${ofKey} runs of this client are waiting already`));
        signal?.addEventListener('abort', abandon, { once: true });
        if (!served.has(key)) served.set(key, tick - 0.5);
        queue.push({ input, transfer, signal, key, resolve: resolve as (value: unknown) => void, reject });
        pump();
      }),
    async close() {
      closed = true;
      for (const timer of restarts) clearTimeout(timer);
      for (const task of queue.splice(0)) task.reject(closedError());
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
  };
}

/** The thread's side: runs each input through `work` and answers with its result (structured-cloned). */
export function serveTimedWork<I, O>(work: (input: I) => Promise<O>): void {
  const port = parentPort!;
  port.on('message', (input: I) => {
    work(input).then(
      (value) => port.postMessage({ kind: 'done', value } satisfies Reply),
      (error: unknown) => port.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies Reply),
    );
  });
  port.postMessage({ kind: 'ready' } satisfies Reply);
}
