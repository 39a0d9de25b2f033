/**
 * Lua scripts of the Redis store: each multi-key change runs as one script, so the indexes never disagree with
 * the records. Every script's KEYS[1] is the key it is about (routing under Cluster); the index entry `x` of a task
 * (JSON `[taskId, ownerZset, ownerMember, activeSet, idempotencyKey|null]`, fixed at insert) names the rest, and
 * is also the task's member in the expiry zset, so a sweep can clean up after a record Redis already expired.
 * Redis returns a missing value to Lua as `false`, and `false` in a reply array as nil.
 */

/** Sets the task's mutable index state; `tkey` must already hold d, v and x. */
const APPLY = `
local function apply(prefix, tkey, x, e, active, lease, rkey, ttl)
  local ix = cjson.decode(x)
  local id, akey, kkey = ix[1], ix[4], ix[5]
  local old = redis.call('HGET', tkey, 'r')
  if old and old ~= rkey then redis.call('SREM', old, id) end
  if active == '1' then redis.call('SADD', akey, id) else redis.call('SREM', akey, id) end
  if lease ~= '' then
    redis.call('HSET', tkey, 'l', lease)
    redis.call('ZADD', prefix .. 'leases', lease, id)
  else
    redis.call('HDEL', tkey, 'l')
    redis.call('ZREM', prefix .. 'leases', id)
  end
  if rkey ~= '' then
    redis.call('HSET', tkey, 'r', rkey)
    redis.call('SADD', rkey, id)
  else
    redis.call('HDEL', tkey, 'r')
  end
  local haskey = type(kkey) == 'string'
  if e ~= '' then
    redis.call('HSET', tkey, 'e', e)
    redis.call('ZADD', prefix .. 'expiry', e, x)
    redis.call('PEXPIRE', tkey, ttl)
    if haskey then redis.call('PEXPIRE', kkey, ttl) end
  else
    redis.call('HDEL', tkey, 'e')
    redis.call('ZREM', prefix .. 'expiry', x)
    redis.call('PERSIST', tkey)
    if haskey then redis.call('PERSIST', kkey) end
  end
end
`;

/**
 * Files the task under its status for operators' reads (a zset per status, and one of every task), member `x[3]`
 * (the owner-zset member, so lexical order is creation order across owners too).
 */
const STATUS = `
local function set_status(prefix, tkey, member, status)
  local old = redis.call('HGET', tkey, 's')
  if old == status then return end
  if old then redis.call('ZREM', prefix .. 's:' .. old, member) end
  redis.call('ZADD', prefix .. 's:' .. status, 0, member)
  redis.call('HSET', tkey, 's', status)
end
`;

/**
 * Byte accounting of stored records: each task's record bytes (hash `bytes`, kept apart from the task so a record
 * Redis expired on its own is still subtracted by the sweep), per owner (hash `ob`) and in total (`tb`). The
 * owner is the tail of the owner-zset key `ix[2]` (`<prefix>o:<owner>`). `bytes` nil forgets the task.
 */
const ACCOUNT = `
local function owner_of(prefix, ix)
  return string.sub(ix[2], #prefix + 3)
end
local function account(prefix, id, owner, bytes)
  local old = tonumber(redis.call('HGET', prefix .. 'bytes', id) or '0')
  local delta = (bytes or 0) - old
  if bytes then redis.call('HSET', prefix .. 'bytes', id, bytes) else redis.call('HDEL', prefix .. 'bytes', id) end
  if delta == 0 then return end
  if redis.call('INCRBY', prefix .. 'tb', delta) == 0 then redis.call('DEL', prefix .. 'tb') end
  if redis.call('HINCRBY', prefix .. 'ob', owner, delta) == 0 then redis.call('HDEL', prefix .. 'ob', owner) end
end
`;

/** Removes a task and every index entry of it; works when the record itself is already gone. */
const DROP = `${ACCOUNT}
local function drop(prefix, x, rkey)
  local ix = cjson.decode(x)
  local id, kkey = ix[1], ix[5]
  local owner = owner_of(prefix, ix)
  account(prefix, id, owner, nil)
  redis.call('ZREM', prefix .. 'f:' .. owner, id)
  redis.call('ZREM', prefix .. 'fetched', id)
  redis.call('DEL', prefix .. 't:' .. id)
  redis.call('ZREM', ix[2], ix[3])
  redis.call('SREM', ix[4], id)
  -- The key may already belong to a newer task if Redis expired this one's copy of it.
  if type(kkey) == 'string' and redis.call('GET', kkey) == id then redis.call('DEL', kkey) end
  redis.call('ZREM', prefix .. 'expiry', x)
  redis.call('ZREM', prefix .. 'leases', id)
  if rkey then redis.call('SREM', rkey, id) end
  redis.call('ZREM', prefix .. 'all', ix[3])
  for _, status in ipairs({'working', 'input_required', 'completed', 'failed', 'cancelled'}) do
    redis.call('ZREM', prefix .. 's:' .. status, ix[3])
  end
end
`;

/**
 * Appends ARGV[from..] to the timeline list `lkey`, keeps the first and the newest `max` entries, and gives the list
 * the task's (`tkey`) own native expiry, so a timeline never outlives its task.
 */
export const TIMELINE_APPEND_FN = `
local function append_timeline(lkey, tkey, max, from)
  local n = redis.call('RPUSH', lkey, unpack(ARGV, from))
  if n > max then
    local first = redis.call('LINDEX', lkey, 0)
    redis.call('LTRIM', lkey, -(max - 1), -1)
    redis.call('LPUSH', lkey, first)
  end
  local ttl = redis.call('PTTL', tkey)
  if ttl > 0 then redis.call('PEXPIRE', lkey, ttl) else redis.call('PERSIST', lkey) end
  return n
end
`;

/**
 * KEYS[1] task. ARGV: d, version, x, expiresAt|'', active, lease|'', runnerKey|'', ttl, prefix, maxActive|'',
 * maxStored|'', status, maxStoredBytes|'', then the new task's timeline list|'', maxEntries, entries...
 * (TaskStore.insertsAlong). Returns {'ok'}, {'id'}, {'key', d, l} or {'limit', 'active'|'stored'|'stored_bytes'}: the
 * owner caps are checked in the same script as the write, so they hold across processes.
 */
export const INSERT = `${APPLY}${STATUS}${TIMELINE_APPEND_FN}${ACCOUNT}
local tkey = KEYS[1]
local prefix = ARGV[9]
if redis.call('EXISTS', tkey) == 1 then return {'id'} end
local ix = cjson.decode(ARGV[3])
local kkey = ix[5]
if type(kkey) == 'string' then
  local holder = redis.call('GET', kkey)
  if holder then
    local h = redis.call('HMGET', prefix .. 't:' .. holder, 'd', 'l')
    if h[1] then return {'key', h[1], h[2]} end
  end
end
if ARGV[10] ~= '' and redis.call('SCARD', ix[4]) >= tonumber(ARGV[10]) then return {'limit', 'active'} end
if ARGV[11] ~= '' and redis.call('ZCARD', ix[2]) >= tonumber(ARGV[11]) then return {'limit', 'stored'} end
local owner = owner_of(prefix, ix)
if ARGV[13] ~= '' and tonumber(redis.call('HGET', prefix .. 'ob', owner) or '0') >= tonumber(ARGV[13]) then
  return {'limit', 'stored_bytes'}
end
account(prefix, ix[1], owner, #ARGV[1])
if type(kkey) == 'string' then redis.call('SET', kkey, ix[1]) end
redis.call('HSET', tkey, 'd', ARGV[1], 'v', ARGV[2], 'x', ARGV[3])
redis.call('ZADD', ix[2], 0, ix[3])
redis.call('ZADD', prefix .. 'all', 0, ix[3])
set_status(prefix, tkey, ix[3], ARGV[12])
apply(prefix, tkey, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
if ARGV[14] and ARGV[14] ~= '' then append_timeline(ARGV[14], tkey, tonumber(ARGV[15]), 16) end
return {'ok'}
`;

/** The compare-and-set of `tkey` on ARGV 1-10 (see REPLACE); 1 when it wrote, 0 when the version differed. */
const REPLACE_FN = `
local function replace(tkey)
  local cur = redis.call('HMGET', tkey, 'v', 'x', 'r', 'l')
  if cur[1] ~= ARGV[1] then return 0 end
  local lease = ARGV[6]
  -- A lease renewed since the writer read the task is kept when the runner stays the same.
  if lease ~= '' and cur[3] and cur[3] == ARGV[7] and cur[4] and tonumber(cur[4]) > tonumber(lease) then lease = cur[4] end
  redis.call('HSET', tkey, 'd', ARGV[2], 'v', ARGV[3])
  local ix = cjson.decode(cur[2])
  account(ARGV[9], ix[1], owner_of(ARGV[9], ix), #ARGV[2])
  set_status(ARGV[9], tkey, ix[3], ARGV[10])
  apply(ARGV[9], tkey, cur[2], ARGV[4], ARGV[5], lease, ARGV[7], ARGV[8])
  return 1
end
`;

/** KEYS[1] task. ARGV: expectedVersion, d, version, expiresAt|'', active, lease|'', runnerKey|'', ttl, prefix, status. */
export const REPLACE = `${APPLY}${STATUS}${ACCOUNT}${REPLACE_FN}
return replace(KEYS[1])
`;

/**
 * REPLACE, then with the write its timeline entries and its event (TaskStore.replacesAlong). ARGV 1-10 as REPLACE,
 * then: events channel, event payload, timeline list|'', maxEntries, entries...
 */
export const REPLACE_ALONG = `${APPLY}${STATUS}${ACCOUNT}${REPLACE_FN}${TIMELINE_APPEND_FN}
if replace(KEYS[1]) == 0 then return 0 end
if ARGV[13] ~= '' then append_timeline(ARGV[13], KEYS[1], tonumber(ARGV[14]), 15) end
redis.call('PUBLISH', ARGV[11], ARGV[12])
return 1
`;

/** KEYS[1] task. ARGV: prefix. Returns 1 when the task existed. */
export const DELETE = `${DROP}
local h = redis.call('HMGET', KEYS[1], 'x', 'r')
if not h[1] then return 0 end
drop(ARGV[1], h[1], h[2])
return 1
`;

/**
 * KEYS[1] task. ARGV: prefix, fetchedAt. Marks a terminal task's outcome delivered (the first mark stays): its id goes
 * in the owner's fetched zset (`f:<owner>`) and the store's (`fetched`), scored by when.
 */
export const MARK_FETCHED = `${ACCOUNT}
local h = redis.call('HMGET', KEYS[1], 's', 'x', 'f')
if not h[1] or h[3] or h[1] == 'working' or h[1] == 'input_required' then return 0 end
local ix = cjson.decode(h[2])
redis.call('HSET', KEYS[1], 'f', ARGV[2])
redis.call('ZADD', ARGV[1] .. 'f:' .. owner_of(ARGV[1], ix), ARGV[2], ix[1])
redis.call('ZADD', ARGV[1] .. 'fetched', ARGV[2], ix[1])
return 1
`;

/**
 * KEYS[1] a fetched zset (an owner's or the store's). ARGV: prefix, limit. Drops up to `limit` of its tasks, the
 * earliest fetched first, and returns their ids; an entry whose record Redis already expired is left to the sweep.
 */
export const EVICT_FETCHED = `${DROP}
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local out = {}
for _, id in ipairs(ids) do
  local h = redis.call('HMGET', ARGV[1] .. 't:' .. id, 'x', 'r')
  if h[1] then
    drop(ARGV[1], h[1], h[2])
    out[#out + 1] = id
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`;

/** KEYS[1] idempotency key. ARGV: prefix. Returns {d, l} or nil. */
export const GET_BY_KEY = `
local id = redis.call('GET', KEYS[1])
if not id then return nil end
local h = redis.call('HMGET', ARGV[1] .. 't:' .. id, 'd', 'l')
if not h[1] then return nil end
return h
`;

/** KEYS[1] expiry zset. ARGV: now, limit, prefix. Returns {d, l, ...} of the removed tasks still present. */
export const SWEEP = `${DROP}
local prefix = ARGV[3]
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, x in ipairs(entries) do
  local h = redis.call('HMGET', prefix .. 't:' .. cjson.decode(x)[1], 'd', 'l', 'r')
  if h[1] then
    out[#out + 1] = h[1]
    out[#out + 1] = h[2]
  end
  drop(prefix, x, h[3])
end
return out
`;

/** KEYS[1] leases zset. ARGV: now, limit, prefix. Returns {d, l, ...}; drops entries whose record is gone. */
export const FIND_STALE = `
local prefix = ARGV[3]
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  local h = redis.call('HMGET', prefix .. 't:' .. id, 'd', 'l')
  if h[1] then
    out[#out + 1] = h[1]
    out[#out + 1] = h[2]
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`;

/** KEYS[1] runner set. ARGV: leaseUntil, prefix. Writes only the lease field and the leases zset. */
export const RENEW = `
local prefix = ARGV[2]
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local tkey = prefix .. 't:' .. id
  if redis.call('HGET', tkey, 'r') == KEYS[1] then
    redis.call('HSET', tkey, 'l', ARGV[1])
    redis.call('ZADD', prefix .. 'leases', ARGV[1], id)
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return 0
`;

/**
 * KEYS[1] the zset to walk (every task, one status, or one owner). ARGV: start bound ('+' or '(member' or '[member'),
 * stop bound ('-' or '[member'), limit, now, prefix, status|''. Returns {d, l, ...}: the next `limit` unexpired tasks
 * (of that status), newest first.
 */
export const BROWSE = `
local limit = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local prefix = ARGV[5]
local status = ARGV[6]
local out = {}
local found = 0
local bound = ARGV[1]
while found < limit do
  local members = redis.call('ZREVRANGEBYLEX', KEYS[1], bound, ARGV[2], 'LIMIT', 0, math.max(limit - found, 64))
  if #members == 0 then break end
  for _, member in ipairs(members) do
    local h = redis.call('HMGET', prefix .. 't:' .. string.sub(member, 18), 'd', 'l', 'e', 's')
    if h[1] and (not h[3] or tonumber(h[3]) > now) and (status == '' or h[4] == status) then
      out[#out + 1] = h[1]
      out[#out + 1] = h[2]
      found = found + 1
      if found >= limit then break end
    end
  end
  bound = '(' .. members[#members]
end
return out
`;
