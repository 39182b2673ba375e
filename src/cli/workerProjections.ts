import { FOLLOW_EVERY_MS, followStoredCheckpoints } from '../projections/followStoredCheckpoints.ts';
import type { Services } from '../services.ts';

/**
 * An `outreach worker …` process runs the projections only when `RUN_PROJECTIONS=true` is set for it:
 * by default it follows the stored checkpoints of the API process, which runs them (keep them in one
 * process), and so its read models take in what that process writes. Two processes running them each
 * move the checkpoints the other serves from, and every such move made the API reload all its read
 * models on its event loop (requests stalled for seconds).
 */
export function startWorkerProjections(s: Services, onError: (error: unknown) => void, env: Record<string, string | undefined> = process.env): { stop(): Promise<void> } {
  const asked = (env['RUN_PROJECTIONS'] ?? '').trim() !== '';
  if (asked && s.config.RUN_PROJECTIONS) {
    s.projections.start();
    return { stop: () => s.projections.stop() };
  }
  return followStoredCheckpoints(s.projections, FOLLOW_EVERY_MS, onError);
}
