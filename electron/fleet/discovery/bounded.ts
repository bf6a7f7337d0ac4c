// Runs async work over a list with at most `limit` in flight: discovery probes never flood a tailnet.
export async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `work`'s answer if it comes within `msLeft`, else `late()`'s: the work goes on unheard (a DNS
 * look-up cannot be cancelled; a command given the same bound is killed by its own timeout).
 */
export function byDeadline<T>(work: Promise<T>, msLeft: number, late: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(late()), Math.max(0, msLeft));
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
