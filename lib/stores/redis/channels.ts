// The channels a RedisTokenStore and the stores of its accounts listen to, on the one subscriber connection they share:
// a channel is subscribed when its first listener comes and unsubscribed when its last goes, and each message goes to
// the listeners of its channel. Nothing is kept of a channel nobody listens to, so an account dropped is forgotten.
import type { RedisSubscription } from './commands.js';

/** One channel: its listeners, and where its subscription stands. */
interface Channel {
  readonly listeners: Set<(message: string) => void>;
  /** Redis confirmed the SUBSCRIBE, and no UNSUBSCRIBE was sent since. */
  subscribed: boolean;
  /** The SUBSCRIBE and UNSUBSCRIBE of this channel, one after the other, so that they reach Redis in order. */
  queue: Promise<void>;
  /** How many of them are under way or waiting. */
  pending: number;
}

/** The channels listened to on one subscriber connection, for a store and its accounts' stores. */
export class RedisChannels {
  private readonly channels = new Map<string, Channel>();
  private closed = false;

  constructor(private readonly subscription: RedisSubscription) {}

  /**
   * Calls `listener` with each message of `channel`, until `remove`. Resolves to true once Redis has confirmed the
   * subscription, false when it failed (pub/sub only saves waiting: the store polls then) or after `close()`.
   */
  add(name: string, listener: (message: string) => void): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), subscribed: false, queue: Promise.resolve(), pending: 0 };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    return this.settle(name, channel);
  }

  /** Stops calling `listener`; the channel is unsubscribed once it has no listener left. Resolves once it is. */
  remove(name: string, listener: (message: string) => void): Promise<void> {
    const channel = this.channels.get(name);
    if (!channel?.listeners.delete(listener)) return Promise.resolve();
    return this.settle(name, channel).then(() => undefined);
  }

  /** Whether Redis has confirmed the subscription to `name`, and it holds: its listeners hear of releases. */
  subscribed(name: string): boolean {
    return this.channels.get(name)?.subscribed ?? false;
  }

  /** Stops listening to every channel, for good: the store was closed. Resolves once Redis has been told. */
  async close(): Promise<void> {
    this.closed = true;
    const unsubscribed = [...this.channels].map(([name, channel]) => {
      channel.listeners.clear();
      return this.settle(name, channel);
    });
    await Promise.all(unsubscribed);
  }

  /**
   * Brings the channel's subscription in line with its listeners, after the commands sent before, and forgets a channel
   * left with neither; resolves to whether it is subscribed then.
   */
  private settle(name: string, channel: Channel): Promise<boolean> {
    const step = async (): Promise<void> => {
      if (channel.listeners.size > 0 && !channel.subscribed) {
        try {
          await this.subscription.listen(name, (message) => {
            for (const listener of [...channel.listeners]) listener(message);
          });
          channel.subscribed = true;
        } catch {
          // Its listeners learn it from the answer, and may try again.
        }
      } else if (channel.listeners.size === 0 && channel.subscribed) {
        channel.subscribed = false;
        // A connection that fails to unsubscribe hears a channel nobody listens to, which costs nothing but messages.
        await this.subscription.stop(name).catch(() => undefined);
      }
      if (channel.listeners.size === 0 && !channel.subscribed && this.channels.get(name) === channel)
        this.channels.delete(name);
    };
    // At once when nothing is under way, so that the SUBSCRIBE leaves now, with the call that asked for it.
    const settled = channel.pending === 0 ? step() : channel.queue.then(step);
    channel.pending += 1;
    channel.queue = settled.finally(() => {
      channel.pending -= 1;
    });
    return channel.queue.then(() => channel.subscribed);
  }
}

/**
 * One store's subscription to its channel, on the channels it shares with its parent and siblings: taken once, given
 * back with `unlisten()`, and for good with `close()`. Until Redis confirms it, or without a subscriber, the store's
 * lock waiters poll.
 */
export class ChannelListening {
  /** Set while listening, from the SUBSCRIBE sent. */
  private listening: Promise<unknown> | undefined;
  /** The store was closed: it listens no more. */
  private closed = false;

  constructor(
    private readonly channels: RedisChannels | undefined,
    private readonly name: string,
    private readonly onMessage: (message: string) => void,
  ) {}

  /** Listens once; resolves once Redis has answered the SUBSCRIBE, at once without a subscriber or once closed. */
  listen(): Promise<unknown> {
    const channels = this.channels;
    if (!channels || this.closed) return Promise.resolve();
    if (!this.listening) {
      const listening: Promise<void> = channels.add(this.name, this.onMessage).then((subscribed) => {
        // Pub/sub only saves waiting; without it, polling and the re-read under the lock keep things right. The
        // next listen() tries again.
        if (!subscribed && this.listening === listening) void this.unlisten();
      });
      this.listening = listening;
    }
    return this.listening;
  }

  unlisten(): Promise<void> {
    if (!this.listening || !this.channels) return Promise.resolve();
    this.listening = undefined;
    return this.channels.remove(this.name, this.onMessage);
  }

  /** Stops listening, for good: the store was closed. */
  close(): Promise<void> {
    this.closed = true;
    return this.unlisten();
  }

  /** Listening, and Redis confirmed it: the store's waiters hear of releases. */
  get hears(): boolean {
    return this.listening !== undefined && this.channels?.subscribed(this.name) === true;
  }
}
