// A browser app whose tokens are sealed in localStorage with a key no script can read: a non-extractable AES-GCM
// CryptoKey, made on the first start and kept in IndexedDB, which keeps CryptoKeys as they are. `sealing()` checks the
// keys when it is called; an app without `encryption` imports none of it. A module for your app's bundle, not a script.
import axios from 'axios';
import { attachTokenAuth } from 'axios-token-keeper';
import type { TokenAuth } from 'axios-token-keeper';
import { BrowserTokenStore } from 'axios-token-keeper/browser-store';
import { sealing } from 'axios-token-keeper/sealing';

export const api = axios.create({ baseURL: 'https://api.example.com' });

/** Attaches the plugin once the sealing key is read: the store seals with it from the first pair on. */
export async function connect(): Promise<TokenAuth> {
  const key = await sealingKey('tab-key-1');
  const store = new BrowserTokenStore({ key: 'orders-api', encryption: sealing({ keys: [{ id: 'tab-key-1', key }] }) });
  return attachTokenAuth(api, { store });
}

/** The key of `id` from IndexedDB, or made (not extractable) and kept there. */
async function sealingKey(id: string): Promise<CryptoKey> {
  const opening = indexedDB.open('orders-app-keys', 1);
  opening.onupgradeneeded = () => opening.result.createObjectStore('keys');
  const db = await settled(opening);
  try {
    const kept = (await settled(db.transaction('keys').objectStore('keys').get(id))) as CryptoKey | undefined;
    if (kept) return kept;
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    await settled(db.transaction('keys', 'readwrite').objectStore('keys').put(key, id));
    return key;
  } finally {
    db.close();
  }
}

/** An IndexedDB request as a promise. */
function settled<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
  });
}
