import type { TokenPair } from '../../contract/store.js';
import { copyPair, isPair, tryParseRecord } from '../common/record.js';
import type { FencedPair, StoredPair } from '../common/record.js';
import { SealedRecords } from '../sealing/records.js';
import type { Sealer } from '../sealing/records.js';
import type { DpopKeyShelf, StoredKeyPair } from './dpop-keys.js';

/**
 * The record as one tab sees it: the storage entry, where the pair is kept in storage (sealed, with `encryption`), and
 * the newest record the tab wrote, read or was told by another tab, in clear in the tab's memory. Every write is
 * numbered by its fence, so the higher fence is the newer.
 */
export class RecordView {
  /** The newest record this tab wrote, took from a storage event, or was told by another tab. */
  private latest: FencedPair | undefined;
  /** The writes to storage, one after another: each waits for its sealing, and none lands over a newer record. */
  private persisting: Promise<void> = Promise.resolve();
  /** How the entry's pair is sealed and opened (in clear without `encryption`). */
  private readonly records: SealedRecords<Partial<TokenPair>>;
  /** The pairs' DPoP keys in IndexedDB (dpop-keys.ts), loaded with the first pair that has one. */
  private shelf: Promise<DpopKeyShelf> | undefined;

  /**
   * @param storage Where the entry is kept; none with `storage: 'none'`.
   * @param entry The entry's key in storage.
   * @param where The entry, as an error names it.
   * @param accessInMemory Store the pair without its access token (`keepAccessInMemory`).
   * @param sealer The sealing of `encryption`; none without it.
   */
  constructor(
    private readonly storage: Storage | undefined,
    readonly entry: string,
    private readonly where: string,
    private readonly accessInMemory: boolean,
    sealer: Sealer | undefined,
  ) {
    // Bound to the entry's name: a sealed pair copied to another key or account's entry does not open.
    this.records = new SealedRecords(sealer, entry, where, isStoredPair);
  }

  get known(): FencedPair | undefined {
    return this.latest;
  }

  /**
   * Takes `record` as the one this tab knows. False for a record older than the one held (a late message, an answer
   * to another tab's question): an older record never replaces a newer one.
   */
  take(record: FencedPair): boolean {
    if (this.latest && record.fence < this.latest.fence) return false;
    this.latest = { fence: record.fence, pair: copyPair(record.pair) };
    return true;
  }

  /**
   * The newest record this tab can see, in storage (its pair opened) or known. Throws for an entry that is not ours,
   * and, with `encryption`, for a pair that does not open (see `SealedRecords.open`).
   */
  async newest(): Promise<FencedPair<Partial<TokenPair>> | undefined> {
    const stored = this.readStored();
    const latest = this.latest;
    if (!stored) return latest;
    if (latest && latest.fence > stored.fence) return latest;
    return { fence: stored.fence, pair: await this.keyed(await this.records.open(stored)) };
  }

  /** The fence of the newest record this tab can see; throws for an entry that is not ours, which is never overwritten. */
  checkedFence(): number {
    return Math.max(this.readStored()?.fence ?? 0, this.latest?.fence ?? 0);
  }

  /** The fence of the newest record this tab can see; an entry that is not ours counts as none. */
  newestFence(): number {
    const stored = this.readStoredQuietly();
    return Math.max(stored?.fence ?? 0, this.latest?.fence ?? 0);
  }

  /** Writes what storage keeps of `record`: all of it, or all but the access token; sealed with `encryption`. */
  persist(record: FencedPair): Promise<void> {
    return this.queue(record, false);
  }

  /** Writes `record` as `persist` does, unless the entry holds something that is not ours: that stays as it is. */
  persistOverOurs(record: FencedPair): Promise<void> {
    return this.queue(record, true);
  }

  /** The record that a storage event of this entry carries whole (access token included), not opened yet. */
  carriedBy(event: StorageEvent): FencedPair<StoredPair<Partial<TokenPair>>> | undefined {
    if (event.key !== this.entry || event.storageArea !== this.storage || event.newValue === null) return undefined;
    // With the access token in memory, storage never carries a whole pair.
    return this.accessInMemory ? undefined : tryParseRecord(event.newValue);
  }

  /** A record carried by a storage event, opened: undefined unless it holds a whole pair (or none). */
  async opened(record: FencedPair<StoredPair<Partial<TokenPair>>>): Promise<FencedPair | undefined> {
    const pair = await this.keyed(await this.records.open(record));
    return pair === null || isPair(pair) ? { fence: record.fence, pair } : undefined;
  }

  private queue(record: FencedPair, overOursOnly: boolean): Promise<void> {
    const written = this.persisting.then(() => this.write(record, overOursOnly));
    this.persisting = written.catch(() => undefined);
    return written;
  }

  private async write(record: FencedPair, overOursOnly: boolean): Promise<void> {
    if (!this.storage) return;
    // A dropped pair stays a record, with its fence, so that an older record cannot come back after it.
    let pair: StoredKeyPair | null = copyPair(record.pair);
    if (pair && this.accessInMemory) delete pair.access;
    // An entry that is not ours is left as it is: checked before sealing, which it would waste, and after.
    if (overOursOnly && this.readStoredQuietly() === null) return;
    // A DPoP key goes into IndexedDB before the entry names it; the key of the pair replaced goes after it.
    if (pair?.dpopKey || this.latest?.pair?.dpopKey || this.shelf)
      pair = await (await this.keys()).toStored(record.fence, pair);
    const text = await this.records.toJson(record.fence, pair);
    const stored = this.readStoredQuietly();
    if (overOursOnly && stored === null) return;
    // Sealing takes a moment: a newer record another tab wrote meanwhile stays.
    if (stored && stored.fence > record.fence) return;
    this.storage.setItem(this.entry, text);
  }

  /** A stored pair with the DPoP key its thumbprint names, if IndexedDB has it (see DpopKeyShelf.fromStored). */
  private async keyed(pair: StoredKeyPair | null): Promise<Partial<TokenPair> | null> {
    return pair?.dpopJkt ? (await this.keys()).fromStored(pair, this.latest?.pair?.dpopKey) : pair;
  }

  private keys(): Promise<DpopKeyShelf> {
    return (this.shelf ??= import('./dpop-keys.js').then(
      ({ DpopKeyShelf }) => new DpopKeyShelf(this.entry),
      (error: unknown) => {
        // A chunk that failed to load (a network blip) is tried again by the next pair.
        this.shelf = undefined;
        throw error;
      },
    ));
  }

  /** The stored record, undefined when there is none, or null for an entry that is not ours. */
  private readStoredQuietly(): FencedPair<StoredPair<Partial<TokenPair>>> | undefined | null {
    try {
      return this.readStored();
    } catch {
      return null;
    }
  }

  /** The stored record, or undefined when there is none; throws, naming the entry, for one that is not ours. */
  private readStored(): FencedPair<StoredPair<Partial<TokenPair>>> | undefined {
    const text = this.storage?.getItem(this.entry);
    if (text === null || text === undefined) return undefined;
    const record = tryParseRecord(text, { accessOptional: true });
    if (!record) {
      throw new Error(
        `${this.where} is not a token record of this package; pass another \`key\`, or remove the entry.`,
      );
    }
    return record;
  }
}

/** What the storage entry may hold: a pair, without its access token with `keepAccessInMemory`. */
function isStoredPair(value: unknown): value is Partial<TokenPair> {
  return isPair(value, { accessOptional: true });
}
