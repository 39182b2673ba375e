import { type MessagePort, Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config.ts';
import type { DeliveryStatus } from '../domain/webhookDelivery.ts';
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import type { CommittedBatch, SqliteReadModelStore } from '../adapters/sqlite/sqliteReadModelStore.ts';
import { oncePerTurn } from '../lib/oncePerTurn.ts';
import { type ProjectionThread, applyFollowedBatches, reloadFromFile } from '../projections/projectionThread.ts';
import type { Services } from '../services.ts';

/**
 * The webhook delivery worker, the Outreach Agent and the agent runner as one worker thread of the `npm start` process
 * (WORKERS_IN_THREAD, default true with the embedded SQLite stores and the projection thread), so
 * their dispatching, signing, HTTP, triage and drafting never take the event loop that serves
 * requests. The thread opens its own connections, as `outreach worker webhooks` / `outreach worker
 * agent` do in their own processes, and resumes from the same stored checkpoints after a crash (a
 * thread that dies is started again). It does not run the projections: the main thread passes on
 * what the projection thread commits (`ProjectionThread.relayTo`), and the thread applies it to its
 * own in-memory read models. Appends are announced both ways, so each side's waiters wake at once.
 */

type RoleStats = {
  webhooks: { position: bigint; queue: { waitingForRetry: number; held: number; inFlight: number } } | null;
  agent: { position: bigint } | null;
};

type ToThread =
  | { kind: 'wake' }
  | { kind: 'batches'; batches: CommittedBatch[] }
  | { kind: 'reload' }
  | { kind: 'writer'; port: MessagePort }
  | { kind: 'stop'; drainMs: number };
type FromThread =
  | { kind: 'ready' }
  | { kind: 'appended' }
  | { kind: 'stats'; stats: RoleStats }
  | { kind: 'attempts'; statuses: DeliveryStatus[] }
  | { kind: 'log'; level: 'error' | 'warn'; msg: string; err?: { message: string; stack?: string }; fields?: Record<string, string | number | boolean | null> }
  | { kind: 'stopped' };

export interface BackgroundThreadRoles {
  webhooks: boolean;
  agent: boolean;
  /** The agent runner (queued and scheduled agent runs): its work (interlinking over every article, an outreach run's pages) must not take the event loop that serves requests either. */
  runner: boolean;
}

type Log = { error(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };

export interface BackgroundThread {
  /** What /metrics reads of each role (null when the role does not run), as the thread last reported it. */
  webhooks: { readonly position: bigint; readonly queue: { waitingForRetry: number; held: number; inFlight: number } } | null;
  agent: { readonly position: bigint } | null;
  /** Stops the roles (deliveries and sends in flight get `drainMs`), then the thread. */
  stop(drainMs: number): Promise<void>;
}

const STATS_INTERVAL_MS = 500;

/** Starts the thread and resolves once its roles are running (or the first start failed; it is retried). */
export async function startBackgroundThread(
  services: Services,
  projections: ProjectionThread,
  roles: BackgroundThreadRoles,
  hooks: { log: Log; onAttempt?: (status: DeliveryStatus) => void },
): Promise<BackgroundThread> {
  const events = services.events as SqliteEventStore;
  const { log } = hooks;
  const stats: RoleStats = {
    webhooks: roles.webhooks ? { position: -1n, queue: { waitingForRetry: 0, held: 0, inFlight: 0 } } : null,
    agent: roles.agent ? { position: -1n } : null,
  };
  let worker: Worker | null = null;
  let stopping = false;
  let restartDelay = 100;
  // Set while this thread re-announces the thread's append, so it is not sent back.
  let fromThread = false;
  let firstStart!: () => void;
  const started = new Promise<void>((resolve) => (firstStart = resolve));

  const post = (message: ToThread) => worker?.postMessage(message);
  const stopRelay = projections.relayTo({ batches: (batches) => post({ kind: 'batches', batches }), reload: () => post({ kind: 'reload' }) });
  const wake = oncePerTurn(() => post({ kind: 'wake' }));
  const unsubscribe = events.onAppend(() => {
    if (!fromThread) wake();
  });
  // This store's writer thread was replaced (the old one ended): the thread appends through the new one again.
  const stopResharing = events.onWriterRestart(() => {
    if (!worker) return;
    const port = events.shareWriter();
    worker.postMessage({ kind: 'writer', port } satisfies ToThread, [port]);
  });

  const spawn = (): Worker => {
    // The thread's appends join this store's group commits (one writing connection per process).
    const writer = events.shareWriter();
    const w = new Worker(new URL('../lib/tsWorker.js', import.meta.url), {
      execArgv: [],
      workerData: { entry: import.meta.url, role: 'background', config: services.config, roles, writer },
      transferList: [writer],
    });
    w.on('message', (message: FromThread) => {
      switch (message.kind) {
        case 'ready':
          restartDelay = 100;
          firstStart();
          return;
        case 'appended':
          // The projection thread (woken by this store's append listeners) and this thread's waiters look now.
          fromThread = true;
          try {
            events.noticeAppend();
          } finally {
            fromThread = false;
          }
          return;
        case 'stats':
          if (stats.webhooks && message.stats.webhooks) Object.assign(stats.webhooks, message.stats.webhooks);
          if (stats.agent && message.stats.agent) Object.assign(stats.agent, message.stats.agent);
          return;
        case 'attempts':
          for (const status of message.statuses) hooks.onAttempt?.(status);
          return;
        case 'log': {
          const err = message.err ? Object.assign(new Error(message.err.message), { stack: message.err.stack }) : undefined;
          log[message.level]({ ...message.fields, err }, message.msg);
          return;
        }
        case 'stopped':
          return;
      }
    });
    w.on('error', (err) => log.error({ err }, 'background roles thread failed'));
    w.on('exit', (code) => {
      if (stopping || worker !== w) return;
      log.error({ err: new Error(`background roles thread exited with code ${code}; restarting`) }, 'background roles thread exited');
      worker = null;
      firstStart(); // a start that failed does not hold `npm start` back; the next one is retried below
      setTimeout(() => {
        if (!stopping) worker = spawn();
      }, restartDelay).unref();
      restartDelay = Math.min(restartDelay * 2, 5_000);
    });
    return w;
  };
  worker = spawn();
  await started;

  return {
    webhooks: stats.webhooks,
    agent: stats.agent,
    async stop(drainMs: number) {
      stopping = true;
      unsubscribe();
      stopResharing();
      stopRelay();
      const w = worker;
      worker = null;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ kind: 'stop', drainMs } satisfies ToThread);
      // Work it had not recorded stays pending in its streams and resumes at the next start.
      const timer = setTimeout(() => void w.terminate(), drainMs + 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The thread itself: its own services and connections, the roles, no projections of its own. */
async function runThread(config: Config, roles: BackgroundThreadRoles, writer: MessagePort): Promise<void> {
  const port = parentPort!;
  const post = (message: FromThread) => port.postMessage(message);
  const errOf = (obj: unknown) => {
    const err = (obj as { err?: unknown } | null)?.err;
    return err instanceof Error ? { message: err.message, stack: err.stack } : err === undefined ? undefined : { message: String(err) };
  };
  // The log object's plain fields (an agentKey, a siteId) go with its error, as the main thread would log them.
  const fieldsOf = (obj: unknown) => {
    if (obj === null || typeof obj !== 'object') return undefined;
    const fields: Record<string, string | number | boolean | null> = {};
    for (const [key, value] of Object.entries(obj)) {
      if (key !== 'err' && (value === null || ['string', 'number', 'boolean'].includes(typeof value))) fields[key] = value as string | number | boolean | null;
    }
    return fields;
  };
  const log: Log = {
    error: (obj, msg) => post({ kind: 'log', level: 'error', msg: msg ?? 'error', err: errOf(obj), fields: fieldsOf(obj) }),
    warn: (obj, msg) => post({ kind: 'log', level: 'warn', msg: msg ?? 'warning', err: errOf(obj), fields: fieldsOf(obj) }),
  };
  // Imported here: the main thread loads this module only for startBackgroundThread.
  const { createServices } = await import('../services.ts');
  const { startWebhookWorker } = await import('./webhookDelivery/startWorker.ts');
  const { startAgentWorker } = await import('./agent/startAgentWorker.ts');
  const { startAgentRunner } = await import('./agentRuns/startAgentRunner.ts');

  const services = await createServices(config, {
    eventStoreWriter: writer,
    onProjectionError: (err) => log.error({ err }, 'projection failed'),
    onExtractorError: (err) => log.warn({ err }, 'language-model extractor failed; used the offline extractor'),
  });
  const events = services.events as SqliteEventStore;
  const readModels = services.readModels as SqliteReadModelStore;
  const runner = services.projections;
  // The projection thread applies the projections; a reader here that waits asks the main thread to wake it.
  runner.follow(() => post({ kind: 'appended' }));
  let fromMain = false;
  events.onAppend(() => {
    if (!fromMain) post({ kind: 'appended' });
  });
  const resync = () => reloadFromFile(readModels, runner);

  // The turn's attempts in one message to the main thread's metrics.
  let pendingAttempts: DeliveryStatus[] = [];
  const postAttempts = oncePerTurn(() => {
    post({ kind: 'attempts', statuses: pendingAttempts });
    pendingAttempts = [];
  });
  const onAttempt = (status: DeliveryStatus) => {
    pendingAttempts.push(status);
    postAttempts();
  };

  // Messages wait in the port's queue until this listener is attached: batches committed before
  // the read models above were loaded are skipped by applyCommitted.
  let stopRequested: number | null = null;
  let stopRoles: ((drainMs: number) => Promise<void>) | null = null;
  const stop = async (drainMs: number) => {
    await stopRoles?.(drainMs);
    await services.close();
    post({ kind: 'stopped' });
    port.close();
  };
  port.on('message', (message: ToThread) => {
    switch (message.kind) {
      case 'wake':
        fromMain = true;
        try {
          events.noticeAppend();
        } finally {
          fromMain = false;
        }
        return;
      case 'batches':
        applyFollowedBatches(readModels, runner, message.batches);
        return;
      case 'writer':
        events.adoptWriter(message.port);
        return;
      case 'reload':
        try {
          resync();
        } catch (err) {
          log.error({ err }, 'background roles thread could not reload the read models');
        }
        return;
      case 'stop':
        if (stopRoles) void stop(message.drainMs);
        else stopRequested = message.drainMs;
        return;
    }
  });
  resync();

  const webhooks = roles.webhooks ? await startWebhookWorker(services, log, { onAttempt }) : null;
  const agent = roles.agent ? await startAgentWorker(services, log) : null;
  const agentRunner = roles.runner ? await startAgentRunner(services, log) : null;
  const report = () =>
    post({
      kind: 'stats',
      stats: {
        webhooks: webhooks ? { position: webhooks.position, queue: { ...webhooks.queue } } : null,
        agent: agent ? { position: agent.worker.position } : null,
      },
    });
  const reporter = setInterval(report, STATS_INTERVAL_MS);
  report();
  stopRoles = async (drainMs) => {
    clearInterval(reporter);
    await Promise.all([webhooks?.stop(drainMs), agent?.stop(), agentRunner?.stop()]);
  };
  post({ kind: 'ready' });
  if (stopRequested !== null) await stop(stopRequested);
}

if (!isMainThread && workerData?.role === 'background') await runThread(workerData.config as Config, workerData.roles as BackgroundThreadRoles, workerData.writer as MessagePort);
