/**
 * `work`, or a rejection with `message` once `ms` have passed first. A late failure of `work` after
 * the bound is ignored: the caller has its answer already.
 */
export async function timeBound<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => {});
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
