// How a tab reads the pair: from storage, or, where storage does not keep all of it (`keepAccessInMemory`, a storage of
// its own per tab, or none), from this tab's memory or another tab's, over the channel.
import type { TokenPair } from '../../contract/store.js';
import { copyPair, isPair } from '../common/record.js';
import type { RecordView } from './record-view.js';
import type { TabChannel } from './tab-channel.js';

/**
 * The pair, or null. A tab that does not know the access token asks the other tabs for it; when none answers, it gets
 * the refresh token with an access token that counts as expired, so the plugin renews before sending anything.
 *
 * @param shared Whether storage is shared by every tab (`'local'`): then no pair in it is no pair anywhere.
 */
export async function readPair(view: RecordView, channel: TabChannel, shared: boolean): Promise<TokenPair | null> {
  const newest = await view.newest();
  if (!newest) {
    // Nothing anywhere: with `'local'` no tab has a pair; per tab or in memory only, another tab may.
    if (shared) return null;
    return copyPair((await channel.ask(() => true))?.pair ?? null);
  }
  const { fence, pair } = newest;
  if (!pair) return null;
  if (isPair(pair)) return copyPair(pair);
  // The access token is kept in memory: the tab that wrote this record, or one it told, has it.
  const known = view.known;
  if (known?.pair && known.fence >= fence && known.pair.refresh === pair.refresh) return copyPair(known.pair);
  const answer = await channel.ask((record) => record.fence >= fence && record.pair?.refresh === pair.refresh);
  if (answer) return copyPair(answer.pair);
  // The refresh token, and the DPoP key it is bound to, if any: it goes with that key's proof alone.
  return { ...pair, access: '', expiresAt: 0 };
}
