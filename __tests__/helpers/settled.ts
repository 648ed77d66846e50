// What requests expected to fail settled to: their reasons, and a failure if one was fulfilled.

/** The rejection of every settled result, in order; fails the test if one was fulfilled. */
export function reasons(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.map((result) => {
    if (result.status === 'fulfilled') throw new Error('expected every request to be rejected');
    return result.reason as unknown;
  });
}

/**
 * The reason `promise` rejected with; fails the test if it fulfilled, or, given `is` (such as `isTokenAuthError` or
 * `axios.isAxiosError`), if the reason is not what `is` accepts.
 */
export async function failureOf(promise: Promise<unknown>): Promise<unknown>;
export async function failureOf<T>(promise: Promise<unknown>, is: (reason: unknown) => reason is T): Promise<T>;
export async function failureOf(promise: Promise<unknown>, is?: (reason: unknown) => boolean): Promise<unknown> {
  const reason = await promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => error,
  );
  if (is && !is(reason)) throw new Error(`expected a failure that ${is.name} accepts, got ${String(reason)}`);
  return reason;
}
