import { type Transferable, Worker, parentPort } from 'node:worker_threads';

/** The work ran past its time budget or its memory limit: its thread was ended. Input-driven: running it again would end the same way. */
export class WorkOverBudget extends Error {
  override name = 'WorkOverBudget';
}

export interface TimedWorkers<I, O> {
  /** Runs `input` on the first free thread (FIFO); the budget counts from the moment a thread takes it. */
  run(input: I, transfer?: readonly Transferable[]): Promise<O>;
  /** Refuses what is queued and ends the threads. */
  close(): Promise<void>;
}

export interface TimedWorkersOptions {
  threads: number;
  /** A run longer than this ends its thread (a new one takes its place) and rejects with WorkOverBudget. */
  timeoutMs: number;
  /** The V8 heap limit of each thread, in MiB: a run that needs more ends its thread the same way. */
  maxHeapMb: number;
  /** A thread's failure that no run is waiting for (it failed to start). */
  onError?: (error: unknown) => void;
}

type Task = { input: unknown; transfer: readonly Transferable[]; resolve(value: unknown): void; reject(error: unknown): void };
type Reply = { kind: 'ready' } | { kind: 'done'; value: unknown } | { kind: 'failed'; message: string };
/** `started`: it was ready once (a thread that never was is failing to start). */
type Slot = { worker: Worker; ready: boolean; started: boolean; task: Task | null; timer?: NodeJS.Timeout };

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
    const slot: Slot = { worker, ready: false, started: false, task: null };
    slots.add(slot);
    worker.on('message', (reply: Reply) => {
      if (reply.kind === 'ready') {
        slot.ready = slot.started = true;
        restartDelay = 100;
      } else {
        const task = finish(slot);
        if (reply.kind === 'done') task?.resolve(reply.value);
        else task?.reject(new Error(reply.message));
      }
      pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const task = finish(slot);
      if (!task) return options.onError?.(error);
      task.reject(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new WorkOverBudget(`the work needed more than ${options.maxHeapMb} MiB`) : error);
    });
    worker.on('exit', () => {
      slots.delete(slot);
      finish(slot)?.reject(new Error('the worker thread exited'));
      if (closed) return;
      if (slot.started) return spawn();
      // A thread that keeps failing to start (a broken install) is retried less and less often.
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
    return task;
  };

  const pump = () => {
    for (const slot of slots) {
      if (queue.length === 0) break;
      if (!slot.ready || slot.task) continue;
      const task = queue.shift()!;
      slot.task = task;
      slot.timer = setTimeout(() => {
        slot.ready = false;
        finish(slot)?.reject(new WorkOverBudget(`the work took more than ${options.timeoutMs} ms`));
        void slot.worker.terminate();
      }, options.timeoutMs);
      slot.worker.postMessage(task.input, task.transfer);
    }
    hold();
  };

  for (let i = 0; i < options.threads; i++) spawn();
  return {
    run: (input, transfer = []) =>
      new Promise<O>((resolve, reject) => {
        if (closed) return reject(new Error('the worker threads are closed'));
        queue.push({ input, transfer, resolve: resolve as (value: unknown) => void, reject });
        pump();
      }),
    async close() {
      closed = true;
      for (const timer of restarts) clearTimeout(timer);
      for (const task of queue.splice(0)) task.reject(new Error('the worker threads are closed'));
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
