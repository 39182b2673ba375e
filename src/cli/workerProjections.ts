import type { Services } from '../services.ts';

/**
 * An `outreach worker …` process runs the projections only when `RUN_PROJECTIONS=true` is set for it:
 * by default it follows the checkpoints of the API process, which runs them (keep them in one
 * process). Two processes running them each move the checkpoints the other serves from, and every
 * such move made the API reload all its read models on its event loop (requests stalled for seconds).
 */
export function startWorkerProjections(s: Services, env: Record<string, string | undefined> = process.env): boolean {
  const asked = (env['RUN_PROJECTIONS'] ?? '').trim() !== '';
  if (!asked || !s.config.RUN_PROJECTIONS) return false;
  s.projections.start();
  return true;
}
