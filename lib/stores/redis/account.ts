// An account's place in Redis: the keys and the channel of a store's default account and of its named accounts
// (RedisTokenStore.forAccount), and what a named account's store takes from the store it is of.
import { escapeAccountName } from '../common/account-key.js';
import type { RedisCommands } from './commands.js';
import type { RedisChannels } from './channels.js';
import type { RedisTokenStoreOptions } from './options.js';
import type { Sealer } from '../sealing/records.js';

/** The keys of one account: its pair, its lock, the fence of its last lock, and its record. */
export interface AccountKeys {
  pair: string;
  lock: string;
  fence: string;
  account: string;
}

/**
 * The keys and the channel of the account whose keys' braces hold `tag`: `{tag}:pair`, … `{tag}:changed` for a store's
 * own account, `{tag}#pair`, … for a named one. `#` after the braces, where the default account of every prefix has
 * `:`, so that no named account's key is ever a default account's, whatever the prefixes.
 */
export function accountKeys(tag: string, named: boolean): { keys: AccountKeys; channel: string } {
  const key = (name: string) => `{${tag}}${named ? '#' : ':'}${name}`;
  const keys = { pair: key('pair'), lock: key('lock'), fence: key('fence'), account: key('account') };
  return { keys, channel: key('changed') };
}

/** What the braces of account `name`'s keys hold, in the store whose keys' braces hold `tag`. */
export function accountTag(tag: string, name: string): string {
  return `${tag}#${escapeAccountName(name)}`;
}

/** Where forAccount hands the new store what it shares with its parent: a symbol, so that no option of yours is it. */
export const PARENT = Symbol('the store an account is of');

/** The options of a named account's store: its parent's, and what it shares with it. */
export interface AccountStoreOptions extends RedisTokenStoreOptions {
  [PARENT]?: {
    client: RedisCommands;
    channels: RedisChannels | undefined;
    tag: string;
    sealer: Sealer | undefined;
  };
}
