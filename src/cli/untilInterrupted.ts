/** Resolves at the first SIGINT or SIGTERM: a long-running command (`outreach worker …`) then stops its role and exits. */
export function untilInterrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
