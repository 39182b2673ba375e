/** How often a process that does not run the projections looks at the stored checkpoints. */
export const FOLLOW_EVERY_MS = 250;

/**
 * A process that does not run the projections (an API node with RUN_PROJECTIONS=false, a worker) reads the read models
 * another process writes. Its store serves documents from what it loaded, and reloads only when it
 * sees a stored checkpoint move: this looks every `everyMs`, so another node's writes reach this
 * node's reads within that time (the README promises a second).
 */
export function followStoredCheckpoints(
  projections: { refresh(): Promise<void> },
  everyMs: number,
  onError: (error: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = projections
      .refresh()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
