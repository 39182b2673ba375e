import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { StartupError, isSystemError } from './startupFailure.ts';

/**
 * Creates DATA_DIR (private) if missing; a path that cannot be one (a file, say, or a directory this
 * user may not write to) stops the start with one line naming the variable.
 */
export function ensureDataDir(dir: string): void {
  try {
    makeDirectory(dir);
    // An existing directory this user cannot write to failed later, naming a temporary key file and not the variable.
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    if (!isSystemError(error)) throw error;
    const cause = (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists and is not a directory' : (error as Error).message;
    throw new StartupError(`DATA_DIR: ${dir} cannot be used as the data directory: ${cause}`, { cause: error });
  }
}

/**
 * `mkdir -p` with mode 0700. Node's own recursive mkdir loops forever where a file system answers
 * ENOENT under a parent that exists (DATA_DIR=/proc/nope hung the start): that is an error here.
 */
function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(dir).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir || existsSync(parent)) throw error;
    makeDirectory(parent);
    // Again through this function: another process may have created it meanwhile.
    makeDirectory(dir);
  }
}
