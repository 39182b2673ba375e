import type { FastifyInstance } from 'fastify';

/** A background role of the process: stopped after the HTTP server has drained. */
export interface Role {
  name: string;
  /** Stops the role; `drainMs` is how long work in flight may still take. */
  stop(drainMs: number): Promise<void>;
}

export interface ShutdownDeps {
  fastify: FastifyInstance;
  roles: Role[];
  /** Closes the stores (projections stop after their last page; SQLite flushes). */
  closeServices(): Promise<void>;
  /** The whole sequence's bound (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  log: { info(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };
}

/** Resolves with `true` when `work` settled within `ms`, `false` when the time ran out first. */
async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  try {
    return await Promise.race([work.then(() => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The graceful shutdown, in order: stop accepting connections and let requests in flight finish
 * (their writes wait for the projections, which still run); then stop the background roles, letting
 * webhook deliveries and agent sends in flight finish; then close the stores, so every checkpoint
 * and record is on disk. Each step gets what is left of `timeoutMs`; work still unfinished at the
 * end is not lost (claimed deliveries stay pending in their streams and resume at the next start).
 */
export async function gracefulShutdown(deps: ShutdownDeps): Promise<void> {
  const deadline = Date.now() + deps.timeoutMs;
  const left = () => Math.max(0, deadline - Date.now());
  if (!(await within(left(), deps.fastify.close()))) {
    deps.log.warn({ timeoutMs: deps.timeoutMs }, 'requests still in flight at the shutdown bound; closing their connections');
    deps.fastify.server.closeAllConnections();
  }
  await Promise.all(
    deps.roles.map(async (role) => {
      if (!(await within(left() + 1_000, role.stop(left())))) deps.log.warn({ role: role.name }, 'role did not stop within the shutdown bound');
    }),
  );
  // The stores get what is left and a little more: they flush the last records even when the roles used up the bound.
  if (!(await within(left() + CLOSE_GRACE_MS, deps.closeServices()))) {
    throw new Error(`the stores did not close within the shutdown bound (+${CLOSE_GRACE_MS} ms)`);
  }
  deps.log.info({}, 'shut down');
}

/** How long the stores may still take to close after the shutdown bound. */
export const CLOSE_GRACE_MS = 5_000;

/** A signal this soon after the first is the same one again (npm forwards the terminal's Ctrl-C it also received). */
export const REPEAT_SIGNAL_MS = 2_000;

/**
 * Runs the graceful shutdown once, on the first SIGTERM or SIGINT, then exits 0 (1 if it failed). A
 * second signal, later than REPEAT_SIGNAL_MS after the first, exits at once with 1: what was
 * acknowledged is already durable, and work cut short resumes at the next start, as after a crash.
 */
export function exitGracefullyOnSignals(deps: ShutdownDeps): void {
  let startedAt: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (startedAt !== null) {
      if (performance.now() - startedAt < REPEAT_SIGNAL_MS) return;
      deps.log.warn({ signal }, 'second signal during the shutdown: exiting now');
      process.exit(1);
    }
    startedAt = performance.now();
    deps.log.info({ signal }, 'shutting down');
    gracefulShutdown(deps).then(
      () => process.exit(0),
      (error: unknown) => {
        deps.log.warn({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
