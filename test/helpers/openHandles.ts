import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/** Linux only: the open handles of this process to `file`, one per SQLite connection to it. */
export const canCountHandles = (() => {
  try {
    readdirSync('/proc/self/fd');
    return true;
  } catch {
    return false;
  }
})();

export function handlesTo(file: string): number {
  const path = realpathSync(file);
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
}
