// What a UI renders of the sign-in, as one snapshot that stays the same object until something changes, with the
// listeners that hear of each change: the shape React's useSyncExternalStore takes as it is.
import type { TokenAuthError } from '../contract/errors.js';
import { Emitter } from '../support/emitter.js';
import type { TokenAuthState, TokenAuthStatus } from '../contract/handle.js';

/** What the state is made of, as the renewals know it. */
export interface SignInFacts {
  /** A pair is in use (valid or not). */
  held: boolean;
  /** A renewal (a login, a token call, a read of the store) is under way. */
  busy: boolean;
  /** Since when the renewal under way waits for a store that is down, if it does. */
  storeDownSince: number | undefined;
}

/** The snapshots of {@link TokenAuth.getState}, one per change, and their listeners. */
export class SignInState {
  private snapshot: TokenAuthState = { status: 'signed-out' };
  private failure: TokenAuthError | undefined;
  private readonly changes = new Emitter<{ change: undefined }>();

  constructor(private readonly facts: () => SignInFacts) {}

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

  /** The last renewal failed with `error` (undefined: the failure is over: a pair came, or a logout); `update`d. */
  failed(error: TokenAuthError | undefined, update = true): void {
    this.failure = error;
    if (update) this.update();
  }

  /** Takes the facts again, and makes a new snapshot, told to the listeners, if they changed what it says. */
  update(): void {
    const { held, busy, storeDownSince } = this.facts();
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
