import { accessSync, constants, mkdirSync } from 'node:fs';
import { StartupError, isSystemError } from './startupFailure.ts';

/**
 * Creates DATA_DIR (private) if missing; a path that cannot be one (a file, say, or a directory this
 * user may not write to) stops the start with one line naming the variable.
 */
export function ensureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // An existing directory this user cannot write to failed later, naming a temporary key file and not the variable.
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    if (!isSystemError(error)) throw error;
    const cause = (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists and is not a directory' : (error as Error).message;
    throw new StartupError(`DATA_DIR: ${dir} cannot be used as the data directory: ${cause}`, { cause: error });
  }
}
