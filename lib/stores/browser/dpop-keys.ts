// A pair's DPoP key as the browser store keeps it, loaded by record-view.ts with the first pair that has one: the key
// itself, a non-extractable CryptoKey, in IndexedDB, which every tab of the origin shares and which keeps a CryptoKey
// as it is (a structured clone, never an export). The storage entry names the key by its thumbprint alone (`dpopJkt`),
// so that no private member of it is ever in `localStorage` or `sessionStorage`, sealed or not.
import type { DpopKey } from '../../contract/dpop.js';
import type { TokenPair } from '../../contract/store.js';

/** A pair as the storage entry keeps it: its DPoP key named by its RFC 7638 thumbprint, never the key. */
export type StoredKeyPair = Partial<TokenPair> & { dpopJkt?: unknown };

/** The database of the browser store's DPoP keys, and its one object store. */
const DATABASE = 'axios-token-keeper';
const KEYS = 'dpop-keys';

/** A key as IndexedDB keeps it: under the store's entry and the key's thumbprint, with the fence of its last write. */
interface KeptKey {
  store: string;
  thumbprint: string;
  fence: number;
  key: DpopKey;
}

/**
 * The DPoP keys of one storage entry (one store, one account) in IndexedDB. A key goes in before the record that names
 * it is written, so that a tab that reads the record finds it. Kept per entry: the key of the pair in storage, and the
 * one before it, which a tab that read the previous record a moment ago may still be fetching; older keys go as a pair
 * replaces them, and a cleared pair's with it. A write of an older record (a tab that writes late) drops nothing newer.
 */
export class DpopKeyShelf {
  /** The key this tab last fetched, so that each read of the same record does not go to IndexedDB again. */
  private fetched: DpopKey | undefined;

  /** @param entry The storage entry's name, which names the store's keys. */
  constructor(private readonly entry: string) {}

  /**
   * What the storage entry keeps of `pair`, written under `fence`: its key put into IndexedDB, and named by its
   * thumbprint alone. A key that IndexedDB will not keep (site data blocked, a full disk) counts as a key lost: the
   * record still names it, the open tabs have it over their channel, and a tab that reads the record alone logs in
   * once with a new key, as after `clear()`.
   */
  async toStored(fence: number, pair: StoredKeyPair | null): Promise<StoredKeyPair | null> {
    const key = pair?.dpopKey;
    await this.keep(fence, key, pair ? 1 : 0).catch(() => undefined);
    if (!pair) return null;
    const stored: StoredKeyPair = { ...pair };
    delete stored.dpopKey;
    delete stored.dpopJkt;
    if (key) stored.dpopJkt = key.thumbprint;
    return stored;
  }

  /**
   * The pair a stored one stands for: with the key its thumbprint names (`known` when this tab holds it, else from
   * IndexedDB), or without a key when IndexedDB has none, which the plugin reads as no pair (one login, new key).
   */
  async fromStored(pair: StoredKeyPair, known: DpopKey | undefined): Promise<Partial<TokenPair>> {
    const { dpopJkt: named, ...rest } = pair;
    // A key in a stored pair is none of ours: only the thumbprint names one.
    delete rest.dpopKey;
    if (typeof named !== 'string') return rest;
    const held = [known, this.fetched].find((key) => key?.thumbprint === named);
    const key = held ?? (await this.find(named).catch(() => undefined));
    if (!key) return rest;
    this.fetched = key;
    return { ...rest, dpopKey: key };
  }

  /** The key of `thumbprint`, if IndexedDB keeps it for this entry, and it is a CryptoKey this page can use. */
  private async find(thumbprint: string): Promise<DpopKey | undefined> {
    const kept: unknown = await this.within('readonly', (keys) => keys.get([this.entry, thumbprint]));
    const key = (kept as Partial<KeptKey> | undefined)?.key;
    return key?.thumbprint === thumbprint && key.privateKey instanceof CryptoKey ? key : undefined;
  }

  /**
   * Puts `key` (if any) as written under `fence`, and drops this entry's other keys written under `fence` or before
   * but the `previous` newest of them; the keys of later writes stay.
   */
  private async keep(fence: number, key: DpopKey | undefined, previous: number): Promise<void> {
    await this.within('readwrite', (keys) => {
      const all = keys.getAll(IDBKeyRange.bound([this.entry], [this.entry, []]));
      all.onsuccess = () => {
        const kept = all.result as KeptKey[];
        if (key) {
          const before = kept.find((each) => each.thumbprint === key.thumbprint)?.fence ?? 0;
          keys.put({ store: this.entry, thumbprint: key.thumbprint, fence: Math.max(fence, before), key });
        }
        const older = kept
          .filter((each) => each.fence <= fence && each.thumbprint !== key?.thumbprint)
          .sort((a, b) => b.fence - a.fence);
        for (const stale of older.slice(previous)) keys.delete([this.entry, stale.thumbprint]);
      };
      return all;
    });
  }

  /** Runs `work` in a transaction of its own on a connection of its own; resolves once it is done, to its request's result. */
  private async within<T>(mode: IDBTransactionMode, work: (keys: IDBObjectStore) => IDBRequest<T>): Promise<T> {
    const database = await open();
    try {
      const transaction = database.transaction(KEYS, mode);
      const request = work(transaction.objectStore(KEYS));
      await new Promise<void>((resolve, reject) => {
        transaction.oncomplete = () => resolve();
        transaction.onerror = transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB aborted'));
      });
      return request.result;
    } finally {
      database.close();
    }
  }
}

/** The database, made at its first use; a connection never blocks a later version's upgrade (it closes for it). */
function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(KEYS, { keyPath: ['store', 'thumbprint'] });
    request.onsuccess = () => {
      request.result.onversionchange = () => request.result.close();
      resolve(request.result);
    };
    request.onerror = () => reject(request.error ?? new Error('indexedDB.open failed'));
  });
}
