// What a burst of requests settled to, for tests that expect every one to fail.

/** The rejection of every settled result, in order; fails the test if one was fulfilled. */
export function reasons(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.map((result) => {
    if (result.status === 'fulfilled') throw new Error('expected every request to be rejected');
    return result.reason as unknown;
  });
}
