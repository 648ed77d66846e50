// Which axios the plugin accepts, and the check at attach. A leaf: it imports nothing from above.
import axios, { getAdapter } from 'axios';
import type { AxiosInstance } from 'axios';

/**
 * The axios versions the plugin runs on: from the oldest that passes the core and fault tests (`npm run
 * test:axios-range` runs them on it, the dev dependency `axios-oldest`) up to the next major. Before 1.5.0 axios does
 * not export `getAdapter`, which the plugin reads a request's adapter with. 0.x is refused: its config merge, errors
 * and adapters are another library's. `peerDependencies.axios`, the README and the FAQ say the same;
 * `__tests__/axios-versions.test.ts` checks that they do.
 */
export const AXIOS_RANGE = '>=1.5.0 <2';
const OLDEST = [1, 5, 0] as const;

/** `version` (such as "1.8.4") is `oldest` or later; a pre-release counts as below its release. */
function atLeast(version: string, oldest: readonly [number, number, number]): boolean {
  const parsed = /^(\d+)\.(\d+)\.(\d+)(-)?/.exec(version);
  if (!parsed) return false;
  const [major, minor, patch] = parsed.slice(1, 4).map(Number) as [number, number, number];
  if (major !== oldest[0]) return major > oldest[0];
  if (minor !== oldest[1]) return minor > oldest[1];
  return patch > oldest[2] || (patch === oldest[2] && parsed[4] === undefined);
}

/** `version` is in {@link AXIOS_RANGE}. */
function inRange(version: string): boolean {
  return atLeast(version, OLDEST) && !atLeast(version, [2, 0, 0]);
}

/**
 * Whether the axios this package imports keeps a request with `allowAbsoluteUrls: false` under `baseURL`: the option
 * came in 1.8.0, and its Node adapter honours it from 1.8.2 only. Before, an absolute URL is called as it is, and the
 * origin check must judge it so.
 */
export const HONOURS_ALLOW_ABSOLUTE_URLS = atLeast(axios.VERSION, [1, 8, 2]);

/** axios' own adapters as its versions before 1.2 set them as an instance's default: functions, by these names. */
const OWN_ADAPTERS = ['httpAdapter', 'xhrAdapter'];

/** The adapter of this package's axios that `name` names, or undefined where it has none. */
function ownAdapter(name: string): unknown {
  try {
    return getAdapter(name);
  } catch {
    return undefined;
  }
}

/**
 * Why `instance` cannot be used, as the end of a sentence that starts with its axios; undefined when it can. Two axios
 * can be at work: the one this package imports (where npm resolved the peer dependency), which makes the token calls
 * and gives the adapter a request names ('xhr', 'http', 'fetch'), and the one that made the instance, which builds
 * each request and runs the interceptors. A codebase with one axios has them the same; one with two copies (a
 * dependency with an axios of its own) may not, so both are read where they can be: the default export tells its
 * version, an instance from `axios.create()` does not.
 */
export function axiosVersionProblem(instance: AxiosInstance): string | undefined {
  const needs = `axios-token-keeper needs axios ${AXIOS_RANGE}`;
  const own = axios.VERSION;
  if (!inRange(own))
    return `axios ${own} is the axios this package imports (where npm resolved its peer dependency), and ${needs}`;
  const told = (instance as { VERSION?: unknown }).VERSION;
  if (typeof told === 'string') return inRange(told) ? undefined : `this instance is axios ${told}, and ${needs}`;
  // An instance of another copy made before 1.2 shows it by its default adapter: a function of axios' own, where
  // later versions name theirs. A function the app chose (a mock, a cache, this package's axios' own) is no sign.
  const adapter = instance.defaults?.adapter;
  if (
    typeof adapter === 'function' &&
    OWN_ADAPTERS.includes(adapter.name) &&
    !['http', 'xhr', 'fetch'].some((name) => ownAdapter(name) === adapter)
  )
    return `this instance comes from an axios older than 1.2 (its default adapter is a function, not a name), and ${needs}`;
  return undefined;
}
