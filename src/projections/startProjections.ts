import type { Services } from '../services.ts';
import { type ProjectionThread, canRunInThread, startProjectionThread } from './projectionThread.ts';

/**
 * Starts the projections for a process that serves requests: in their own thread when
 * PROJECTIONS_IN_THREAD is set and both stores are the embedded SQLite ones, otherwise on this
 * thread's event loop. Returns how to stop them (services.close() stops an in-process runner too).
 */
export function startProjections(services: Services, onError: (error: unknown) => void): RunningProjections {
  if (services.config.PROJECTIONS_IN_THREAD && canRunInThread(services)) {
    const thread = startProjectionThread(services, onError);
    return { mode: 'thread', thread, stop: () => thread.stop() };
  }
  services.projections.start();
  return { mode: 'in-process', thread: null, stop: () => services.projections.stop() };
}

export interface RunningProjections {
  mode: 'thread' | 'in-process';
  /** The projection thread (mode 'thread'): other threads follow it through `relayTo`. */
  thread: ProjectionThread | null;
  stop(): Promise<void>;
}
