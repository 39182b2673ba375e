/**
 * Whether an error thrown by a store means "unavailable for now, a retry may pass": a server down or
 * failing over, a network error, an embedded file locked by another process. The API answers such
 * an error 503 SERVICE_UNAVAILABLE with Retry-After instead of 500. Each adapter registers the test
 * for its own client's errors when its module is loaded, so the API knows none of them and a client
 * library is only loaded when its store is configured.
 */
const tests: Array<(error: unknown) => boolean> = [];

export function treatAsUnavailable(test: (error: unknown) => boolean): void {
  if (!tests.includes(test)) tests.push(test);
}

/** A test that throws on an error it was not written for (another store's) says no. */
export const isStoreUnavailable = (error: unknown): boolean =>
  tests.some((test) => {
    try {
      return test(error);
    } catch {
      return false;
    }
  });
