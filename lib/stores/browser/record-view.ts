import type { TokenPair } from '../../store-contract.js';
import { copyPair, recordToJson, tryParseRecord } from '../record.js';
import type { FencedPair } from '../record.js';

/**
 * The record as one tab sees it: the storage entry, where the pair is kept in storage, and the newest record the tab
 * wrote, read or was told by another tab. Every write is numbered by its fence, so the higher fence is the newer.
 */
export class RecordView {
  /** The newest record this tab wrote, took from a storage event, or was told by another tab. */
  private latest: FencedPair | undefined;

  /**
   * @param storage Where the entry is kept; none with `storage: 'none'`.
   * @param entry The entry's key in storage.
   * @param where The entry, as an error names it.
   * @param accessInMemory Store the pair without its access token (`keepAccessInMemory`).
   */
  constructor(
    private readonly storage: Storage | undefined,
    readonly entry: string,
    private readonly where: string,
    private readonly accessInMemory: boolean,
  ) {}

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

  /** The newest record this tab can see: in storage, or known. Throws for an entry that is not ours. */
  newest(): FencedPair<Partial<TokenPair>> | undefined {
    const stored = this.readStored();
    const latest = this.latest;
    if (!stored) return latest;
    return latest && latest.fence > stored.fence ? latest : stored;
  }

  /** The fence of the newest record this tab can see; an entry that is not ours counts as none. */
  newestFence(): number {
    const stored = this.readStoredQuietly();
    return Math.max(stored?.fence ?? 0, this.latest?.fence ?? 0);
  }

  /** Writes what storage keeps of `record`: all of it, or all but the access token. */
  persist(record: FencedPair): void {
    if (!this.storage) return;
    // A dropped pair stays a record, with its fence, so that an older record cannot come back after it.
    const pair: Partial<TokenPair> | null = copyPair(record.pair);
    if (pair && this.accessInMemory) delete pair.access;
    this.storage.setItem(this.entry, recordToJson(record.fence, pair));
  }

  /** Writes `record` as `persist` does, unless the entry holds something that is not ours: that stays as it is. */
  persistOverOurs(record: FencedPair): void {
    if (this.readStoredQuietly() !== null) this.persist(record);
  }

  /** The whole record (access token included) that a storage event of this entry carries, if it carries one. */
  carriedBy(event: StorageEvent): FencedPair | undefined {
    if (event.key !== this.entry || event.storageArea !== this.storage || event.newValue === null) return undefined;
    // With the access token in memory, storage never carries a whole pair.
    return this.accessInMemory ? undefined : tryParseRecord(event.newValue);
  }

  /** The stored record, undefined when there is none, or null for an entry that is not ours. */
  private readStoredQuietly(): FencedPair<Partial<TokenPair>> | undefined | null {
    try {
      return this.readStored();
    } catch {
      return null;
    }
  }

  /** The stored record, or undefined when there is none; throws, naming the entry, for one that is not ours. */
  private readStored(): FencedPair<Partial<TokenPair>> | undefined {
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
