// What a UI renders of the sign-in, as one snapshot that stays the same object until something changes, with the
// listeners that hear of each change: the shape React's useSyncExternalStore takes as it is.
import type { TokenAuthError } from '../contract/errors.js';
import type { TokenAuthState, TokenAuthStatus } from '../contract/handle.js';
import { Emitter } from '../support/emitter.js';

/** The snapshots of {@link TokenAuth.getState}, one per change, and their listeners. */
export class SignInState {
  private snapshot: TokenAuthState = { status: 'signed-out' };
  private failure: TokenAuthError | undefined;
  /** A renewal (a login, a token call, a read of the store) is under way. */
  private renewing = false;
  /** A pair is in use. */
  private holds = false;
  /** The store has been read once (busy until then). */
  private read: boolean;
  /** Since when the renewal under way waits for a store that is down, if it does. */
  private storeDownSince: number | undefined;
  private readonly changes = new Emitter<{ change: undefined }>();

  /** `loaded`: nothing is to be read first (no store other holders share). */
  constructor({ loaded }: { loaded: boolean }) {
    this.read = loaded;
    if (!loaded) this.snapshot = { status: 'signing-in' };
  }

  /** The snapshot now: the same object as before unless something changed. */
  get(): TokenAuthState {
    return this.snapshot;
  }

  /** Someone listens (a UI shows this account). */
  get heard(): boolean {
    return this.changes.has('change');
  }

  /** Calls `listener` after each change; returns the function that stops it. */
  subscribe(listener: () => void): () => void {
    return this.changes.on('change', listener);
  }

  /** A renewal started. */
  renewalStarted(): void {
    this.renewing = true;
    this.update();
  }

  /** The renewal ended: failed with `error` (a failure to show), or not. */
  renewalEnded(error?: TokenAuthError): void {
    this.renewing = false;
    this.storeDownSince = undefined;
    this.failed(error);
  }

  /** The renewal under way waits for a store that is down since `since`; undefined: no longer. */
  storeDown(since: number | undefined): void {
    this.storeDownSince = since;
    this.update();
  }

  /** The last renewal failed with `error` (undefined: the failure is over: a pair came, or a logout). */
  failed(error: TokenAuthError | undefined): void {
    this.failure = error;
    this.update();
  }

  /**
   * A pair was taken into use (`held`), or the one in use dropped. A pair ends a failure, from this holder or another;
   * a renewal of this holder's tells the state once, as it ends, not as it takes its pair.
   */
  held(held: boolean): void {
    this.holds = held;
    if (held) this.failure = undefined;
    if (!this.renewing) this.update();
  }

  /**
   * The store was read for the first time: the state says so at the next {@link update} (a renewal that starts at once
   * says `signing-in` with no `signed-out` between).
   */
  loaded(): void {
    this.read = true;
  }

  /** Takes the facts again, and makes a new snapshot, told to the listeners, if they changed what it says. */
  update(): void {
    const held = this.holds;
    const busy = this.renewing || !this.read;
    const { storeDownSince } = this;
    const status: TokenAuthStatus = held ? (busy ? 'renewing' : 'signed-in') : busy ? 'signing-in' : 'signed-out';
    const error = busy ? undefined : this.failure;
    const { snapshot } = this;
    if (status === snapshot.status && error === snapshot.error && storeDownSince === snapshot.storeDownSince) return;
    this.snapshot = {
      status,
      ...(error !== undefined && { error }),
      ...(storeDownSince !== undefined && { storeDownSince }),
    };
    this.changes.emit('change', undefined);
  }
}
