import type { TokenPair } from '../../contract/store.js';
import { isPair } from '../common/record.js';
import type { FencedPair } from '../common/record.js';

/** How long a tab that knows no pair waits for another tab to tell it one. */
const ASK_PEERS_MS = 150;

/**
 * What the tabs of one key say to each other: a question for the pair, a record of the pair, the account's record as
 * written (JSON text), a lease let go.
 */
type Message =
  | { type: 'ask' }
  | { type: 'pair'; fence: number; pair: TokenPair | null }
  | { type: 'account'; fence: number; text: string }
  | { type: 'released' };

/** What the channel needs of the tab it speaks for. */
export interface ChannelHost {
  /** The record this tab knows: its answer to another tab's question. */
  known(): FencedPair | undefined;
  /** Another tab told of a record, which may be older than the one this tab knows. */
  told(record: FencedPair): void;
  /** Another tab told of the account's record it wrote under `fence`. */
  toldAccount(fence: number, text: string): void;
  /** A message came, of any kind: a tab waiting for the lease looks again. */
  stirred(): void;
}

/**
 * The tabs' BroadcastChannel, over which they hand each other records, and the waits for what it (or a storage event)
 * brings. Without BroadcastChannel, or while closed, it says nothing and hears nothing.
 */
export class TabChannel {
  private broadcast: BroadcastChannel | undefined;
  /** Conditions waited for (an answer from another tab, the last writer's record), checked whenever a record arrives. */
  private readonly watchers = new Set<() => void>();

  constructor(
    private readonly name: string,
    private readonly host: ChannelHost,
  ) {
    this.open();
  }

  /** Opens the channel, unless it is open: a store of an account that was let go and is listened to again opens it. */
  open(): void {
    if (this.broadcast || typeof BroadcastChannel !== 'function') return;
    const broadcast = new BroadcastChannel(this.name);
    broadcast.onmessage = (event: MessageEvent<Message>) => {
      if (this.broadcast === broadcast) this.received(event.data);
    };
    // Node has BroadcastChannel too (server renders, tests): it must not keep a process alive.
    (broadcast as { unref?: () => void }).unref?.();
    this.broadcast = broadcast;
  }

  /** Tells the other tabs of a record this tab wrote. */
  tell(record: FencedPair): void {
    this.post({ type: 'pair', ...record });
  }

  /** Tells the other tabs of the account's record this tab wrote under `fence`. */
  tellAccount(fence: number, text: string): void {
    this.post({ type: 'account', fence, text });
  }

  /** Tells the other tabs that this tab let go of the lease. */
  tellReleased(): void {
    this.post({ type: 'released' });
  }

  /** Asks the other tabs for the record they know; the first answer that `fits` wins, or undefined after a while. */
  async ask(fits: (record: FencedPair) => boolean): Promise<FencedPair | undefined> {
    if (!this.broadcast) return undefined;
    const answer = (): FencedPair | undefined => {
      const known = this.host.known();
      return known?.pair && fits(known) ? known : undefined;
    };
    this.post({ type: 'ask' });
    return (await this.until(() => answer() !== undefined, ASK_PEERS_MS)) ? answer() : undefined;
  }

  /** True once `condition` holds (checked now and whenever a record arrives), false after `ms`. */
  until(condition: () => boolean, ms: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (met: boolean): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
        resolve(met);
      };
      const check = (): void => {
        if (condition()) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.watchers.add(check);
    });
  }

  /** A record arrived, by message or in storage: checks what is waited for. */
  recheck(): void {
    for (const watcher of [...this.watchers]) watcher();
  }

  /** Closes the channel: the browser keeps an open one, and with it the store, for as long as the tab lives. */
  close(): void {
    this.broadcast?.close();
    this.broadcast = undefined;
  }

  private received(message: Message): void {
    if (typeof message !== 'object' || message === null) return;
    if (message.type === 'ask') {
      const known = this.host.known();
      if (known?.pair) this.post({ type: 'pair', ...known });
    } else if (message.type === 'pair') {
      // Another tab, maybe of another version of the app: its record is checked as a stored one would be.
      if (typeof message.fence !== 'number' || (message.pair !== null && !isPair(message.pair))) return;
      this.host.told({ fence: message.fence, pair: message.pair });
    } else if (message.type === 'account') {
      if (typeof message.fence !== 'number' || typeof message.text !== 'string') return;
      this.host.toldAccount(message.fence, message.text);
      this.recheck();
    }
    this.host.stirred();
  }

  private post(message: Message): void {
    this.broadcast?.postMessage(message);
  }
}
