// The link of an account to a shared store while the coordination layer loads: made at once (an account is made
// synchronously), it subscribes to the store at once, as attach returns, and becomes the layer's link as soon as the
// layer's code has arrived, which attach asked for as it checked the store. Until then the account has read nothing,
// every call waits for the layer, and what the store tells is no news (the first read, after, reads it).
import type { TimedOut } from '../support/abort.js';
import type { CheckedStore } from './checked-store.js';
import type {
  LinkParts,
  Outage,
  SharedLinkMaker,
  SharedStoreLink,
  StoreLink,
  Turn,
  TurnRequest,
  TurnWait,
} from './link.js';

export class LazyLink implements StoreLink {
  readonly shares = true;
  readonly keepsRecord: boolean;
  #link: SharedStoreLink | undefined;
  #making: Promise<SharedStoreLink> | undefined;
  readonly #unsubscribe: Array<(() => void) | undefined>;

  /** `load`: the layer's maker, loaded (again, after a chunk that failed to load) on each call. */
  constructor(
    private readonly load$: () => Promise<SharedLinkMaker>,
    private readonly store: CheckedStore,
    private readonly parts: LinkParts,
  ) {
    this.keepsRecord = store.keepsRecord;
    const given = store.store;
    this.#unsubscribe = [
      given.subscribe?.((pair) => this.#link?.heard(pair)),
      store.keepsRecord ? given.subscribeAccount?.(() => this.#link?.heardRecord()) : undefined,
    ];
    this.#made().catch(() => undefined);
  }

  get loaded(): boolean {
    return this.#link?.loaded ?? false;
  }

  get outage(): Outage | undefined {
    return this.#link?.outage;
  }

  readonly readTimedOut: TimedOut = (config) => this.#link?.readTimedOut(config);

  load(): Promise<void> {
    return this.#made().then((link) => link.load());
  }

  consult(): Promise<void> {
    return this.#made().then((link) => link.consult());
  }

  peek(): ReturnType<StoreLink['peek']> {
    return this.#made().then((link) => link.peek());
  }

  turn(): Promise<Turn> {
    return this.#made().then((link) => link.turn());
  }

  /** The layer's wait, once the layer is here: until then, nothing is down and nothing is held. */
  turnWait(request: TurnRequest): TurnWait {
    let wait: TurnWait | undefined;
    const made = (): Promise<TurnWait> => this.#made().then((link) => (wait ??= link.turnWait(request)));
    return {
      next: () => made().then((made) => made.next()),
      lost: (error, turns) => {
        if (!wait) throw error;
        return wait.lost(error, turns);
      },
      heldThroughOutage: () => wait?.heldThroughOutage(),
      held: () => made().then((made) => made.held()),
      timedOut: (config) => wait?.timedOut(config),
      wake: () => wait?.wake(),
    };
  }

  goesAlone(): void {
    this.#link?.goesAlone();
  }

  settled(): Promise<void> {
    return this.#link ? this.#link.settled() : Promise.resolve();
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribe) unsubscribe?.();
    this.#link?.close();
  }

  /** The layer's link, made once its code is here; a load that failed (a network blip) is tried again by the next call. */
  #made(): Promise<SharedStoreLink> {
    return (this.#making ??= this.load$().then(
      (make) => (this.#link = make(this.store, this.parts)),
      (error: unknown) => {
        this.#making = undefined;
        throw error;
      },
    ));
  }
}
