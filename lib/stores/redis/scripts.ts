// The Lua scripts of RedisTokenStore: each runs in Redis as one step, on the keys of one account, which share a hash
// tag and so one Cluster slot. KEYS and ARGV are named where each script is defined.

/**
 * The fence of the last grant, or of the stored record if greater: not an `INCR` of the fence key alone, which would
 * count again from 1 once that key expired or was deleted. Lua shared by LOCK and WRITE, for KEYS[2] the fence and
 * `current` the pair's value as read (or false).
 */
const LATEST_FENCE = `
local function latest_fence(current)
  local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
  if current then
    local ok, record = pcall(cjson.decode, current)
    if ok and type(record) == 'table' and type(record.fence) == 'number' and record.fence > latest then latest = record.fence end
  end
  return latest
end`;

/**
 * Takes the lock (KEYS[3]) with a fence greater than any granted or written before; or tells how long the current
 * lease has left, and what the pair is now (so that a waiter learns of a new pair without another command).
 */
export const LOCK = `${LATEST_FENCE}
if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = latest_fence(redis.call('GET', KEYS[1])) + 1
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[3])
  return {1, fence}
end
return {0, redis.call('PTTL', KEYS[3]), redis.call('GET', KEYS[1])}`;

/** Extends the lease, if the lock is still this holder's. */
export const EXTEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Compare and delete: a lease that lapsed may be another holder's lock by now. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], 'released')
  return 1
end
return 0`;

/**
 * Writes (or, with an empty record, deletes) the pair unless a later lock was granted than the writer's fence.
 * A value there that is not a record of ours is left alone (-1): a wrong prefix must lose nothing.
 */
export const WRITE = `${LATEST_FENCE}
local current = redis.call('GET', KEYS[1])
if current then
  local ok, record = pcall(cjson.decode, current)
  if not ok or type(record) ~= 'table' or record.version ~= 1 then return -1 end
end
if ARGV[2] ~= '' and tonumber(ARGV[2]) < latest_fence(current) then return 0 end
if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], 'changed')
return 1`;

/**
 * Writes the account's record (KEYS[3]) for as long as it says something (ARGV[3] ms; none: deleted), unless a later
 * lock was granted than the writer's fence (ARGV[2]), as WRITE does for the pair; and, when it pauses logins, says so
 * on the channel ARGV[4] (none: '').
 */
export const WRITE_ACCOUNT = `${LATEST_FENCE}
if ARGV[2] ~= '' and tonumber(ARGV[2]) < latest_fence(redis.call('GET', KEYS[1])) then return 0 end
if tonumber(ARGV[3]) <= 0 then redis.call('DEL', KEYS[3]) else redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'account') end
return 1`;
