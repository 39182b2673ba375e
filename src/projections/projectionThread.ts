import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type CommittedBatch, SqliteReadModelStore } from '../adapters/sqlite/sqliteReadModelStore.ts';
import { READ_MODEL_INDEXES } from '../readModels/indexes.ts';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import type { EventStore } from '../ports/eventStore.ts';
import { allProjections } from './index.ts';
import { oncePerTurn } from '../lib/oncePerTurn.ts';
import { ProjectionRunner } from './projectionRunner.ts';

/**
 * The projections as their own thread of the one process (PROJECTIONS_IN_THREAD, default true with
 * the embedded SQLite stores): the thread reads the event log and writes the read-model file
 * through its own connections, and after each step sends the main thread what it committed. The
 * main thread applies that to its in-memory read models (no projection code, no SQLite writes on
 * the event loop that serves requests) and advances its runner's checkpoints, so read-your-writes
 * holds exactly as in-process: a write route's `waitFor(position)` resolves once every projection
 * of this process includes the write, as the main thread's read models serve it.
 */

type ToThread = { kind: 'wake' } | { kind: 'stop' };
type FromThread =
  | { kind: 'batches'; batches: CommittedBatch[] }
  | { kind: 'reload' }
  | { kind: 'started'; positions: Array<[projection: string, position: string]> }
  | { kind: 'error'; message: string; stack?: string }
  | { kind: 'stopped' };

export interface ProjectionThread {
  stop(): Promise<void>;
  /**
   * Passes on to `follower` (another thread that keeps its own in-memory read models: the background
   * roles' thread) every batch this thread applies, after it applied it, and every reload.
   * Returns how to stop passing them on.
   */
  relayTo(follower: ProjectionFollower): () => void;
}

/** Another thread following the projection thread through this one. */
export interface ProjectionFollower {
  batches(batches: CommittedBatch[]): void;
  /** The read-model file holds documents the follower may have missed: reload it. */
  reload(): void;
}

interface ThreadServices {
  config: { DATA_DIR: string };
  events: EventStore;
  readModels: unknown;
  projections: ProjectionRunner;
}

/** Whether the projections of these services can run in their own thread (both stores embedded SQLite). */
export function canRunInThread(services: ThreadServices): boolean {
  return services.events instanceof SqliteEventStore && services.readModels instanceof SqliteReadModelStore;
}

/** A thread that follows the projections: its documents and checkpoints as the read-model file holds them now. */
export function reloadFromFile(readModels: SqliteReadModelStore, runner: ProjectionRunner): void {
  readModels.reload();
  for (const projection of runner.projections) {
    const checkpoint = readModels.heldCheckpoint(projection.name);
    if (checkpoint && checkpoint.version === projection.version) runner.advance(projection.name, checkpoint.position);
  }
}

/** A thread that follows the projections: what the projection thread committed, applied to its documents and checkpoints (batches they already include are skipped). */
export function applyFollowedBatches(readModels: SqliteReadModelStore, runner: ProjectionRunner, batches: readonly CommittedBatch[]): void {
  for (const batch of batches) if (readModels.applyCommitted(batch)) runner.advance(batch.projection, batch.to);
}

/** Starts the projection thread; the services' runner then follows it. A thread that dies is restarted after the main thread's read models are reloaded from the file. */
export function startProjectionThread(services: ThreadServices, onError: (error: unknown) => void = () => {}): ProjectionThread {
  const events = services.events as SqliteEventStore;
  const readModels = services.readModels as SqliteReadModelStore;
  const runner = services.projections;
  let worker: Worker | null = null;
  // Every append settled in the turn (and every read-your-writes wait that asks for a look) is committed by then.
  const wake = oncePerTurn(() => worker?.postMessage({ kind: 'wake' } satisfies ToThread));
  runner.follow(wake);
  let stopping = false;
  const followers = new Set<ProjectionFollower>();
  // The documents and checkpoints as the file holds them (after a restart, or the thread's own reload).
  const resync = () => {
    try {
      for (const follower of followers) follower.reload();
      reloadFromFile(readModels, runner);
    } catch (error) {
      onError(error);
    }
  };
  let restartDelay = 100;

  const spawn = () => {
    const w = new Worker(new URL('../lib/tsWorker.js', import.meta.url), {
      // The thread registers its own TypeScript loader (tsx); the parent's loaders (a test runner's) are not inherited.
      execArgv: [],
      workerData: { entry: import.meta.url, role: 'projections', dataDir: services.config.DATA_DIR },
    });
    w.on('message', (message: FromThread) => {
      switch (message.kind) {
        case 'batches':
          applyFollowedBatches(readModels, runner, message.batches);
          for (const follower of followers) follower.batches(message.batches);
          restartDelay = 100;
          return;
        case 'reload':
          resync();
          return;
        case 'started':
          // Another process may have moved the read models on between this thread's load and the
          // thread's own start (both read the shared file): begin from what the thread begins from.
          if (message.positions.some(([name, position]) => runner.positionOf([name]) !== BigInt(position))) resync();
          return;
        case 'error':
          onError(Object.assign(new Error(message.message), { stack: message.stack }));
          return;
        case 'stopped':
          return;
      }
    });
    w.on('error', onError);
    w.on('exit', (code) => {
      if (stopping || worker !== w) return;
      // What it committed last may not have reached this thread: start again from the file.
      onError(new Error(`projection thread exited with code ${code}; restarting`));
      worker = null;
      setTimeout(() => {
        if (stopping) return;
        resync();
        if (!stopping) worker = spawn();
      }, restartDelay).unref();
      restartDelay = Math.min(restartDelay * 2, 5_000);
    });
    return w;
  };
  worker = spawn();
  const unsubscribe = events.onAppend(wake);

  return {
    relayTo(follower) {
      followers.add(follower);
      return () => followers.delete(follower);
    },
    async stop() {
      stopping = true;
      followers.clear();
      unsubscribe();
      const w = worker;
      worker = null;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ kind: 'stop' } satisfies ToThread);
      // It finishes its step and closes its connections; one that does not within 10 s is ended
      // (whatever it had not committed is applied again from its checkpoint at the next start).
      const timer = setTimeout(() => void w.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The thread itself: its own connections, the same projections, a log it is woken to read. */
async function runThread(dataDir: string): Promise<void> {
  const port = parentPort!;
  const post = (message: FromThread) => port.postMessage(message);
  let pending: CommittedBatch[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    post({ kind: 'batches', batches: pending });
    pending = [];
  };
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  const readModels = new SqliteReadModelStore(join(dataDir, 'readmodels.sqlite'), READ_MODEL_INDEXES, {
    onCommit: (batch) => pending.push(batch),
    // Everything before the reload first, so the main thread never applies an older batch over reloaded documents.
    onReload: () => {
      flush();
      post({ kind: 'reload' });
    },
  });
  // Appends are made by the main thread, which wakes this one (`noticeAppend`); other processes' appends are polled for.
  const runner = new ProjectionRunner(store, readModels, allProjections, {
    onError: (error) => post({ kind: 'error', message: error instanceof Error ? error.message : String(error), stack: error instanceof Error ? error.stack : undefined }),
    onProgress: flush,
  });
  await runner.init();
  post({ kind: 'started', positions: runner.projections.map((p) => [p.name, String(runner.positionOf([p.name]))]) });
  port.on('message', (message: ToThread) => {
    if (message.kind === 'wake') store.noticeAppend();
    else if (message.kind === 'stop') {
      void (async () => {
        await runner.stop();
        flush();
        await store.close();
        await readModels.close();
        post({ kind: 'stopped' });
        port.close();
      })();
    }
  });
  runner.start();
}

if (!isMainThread && workerData?.role === 'projections') await runThread(workerData.dataDir as string);
