import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** Worker roles that resume, at start, the work recorded under their own name (retries, in-flight sends). */
export type WorkerRole = 'webhooks' | 'agent';

export interface WorkerIdentity {
  readonly workerId: string;
  /** Frees the name for the next worker of the role on this host; a process that ends frees its names too, however it ends. */
  release(): void;
}

const MAX_SLOTS = 64;

/**
 * A name no other running worker of the role holds on this host (among processes and threads
 * sharing DATA_DIR): the host name for the first, then `<host>#2`, `<host>#3`… A worker resumes at
 * once what was recorded under its name, as the work of its own previous run; two running workers
 * with one name would both resume it, and send it twice. Each name is an exclusive lock on a file of
 * DATA_DIR/workers, held by a SQLite connection in exclusive locking mode: the operating system
 * drops the lock when the process dies, so a restarted worker takes the lowest free name, whose
 * previous holder is gone.
 */
export function claimWorkerIdentity(dataDir: string, role: WorkerRole, base: string = hostname()): WorkerIdentity {
  const dir = join(dataDir, 'workers');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let slot = 1; slot <= MAX_SLOTS; slot++) {
    // Opened by SQLite only: POSIX locks belong to the process, and closing any other descriptor of
    // the file (as an open-and-close to set its mode would) drops the locks this process holds on it.
    const db = new Database(join(dir, `${role}-${slot}.lock`), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // The first transaction takes the exclusive lock; in this locking mode it is kept until close.
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') continue;
      throw error;
    }
    let held = true;
    return {
      workerId: slot === 1 ? base : `${base}#${slot}`,
      release() {
        if (!held) return;
        held = false;
        db.close();
      },
    };
  }
  throw new Error(`${MAX_SLOTS} ${role} workers already run on this host with DATA_DIR ${dataDir}: give each its own worker id`);
}
