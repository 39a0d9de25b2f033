/**
 * Lua scripts of the Redis store: each multi-key change runs as one script, so the indexes never disagree with
 * the records. Every script's KEYS[1] is the key it is about (routing under Cluster); the index entry `x` of a task
 * (JSON `[taskId, ownerZset, ownerMember, activeSet, idempotencyKey|null]`, fixed at insert) names the rest, and
 * is also the task's member in the expiry zset, so a sweep can clean up after a record Redis already expired.
 * Redis returns a missing value to Lua as `false`, and `false` in a reply array as nil.
 */

/**
 * Sets the task's mutable index state, writing only what changed: `cur` is the task's state before (`r`, `l`, `e`
 * fields, `active`; empty for a new task) and `set`/`del` collect the hash fields, written by the caller with one HSET
 * and one HDEL. Returns the native TTL the task takes now (-1: none), or nil when its expiry did not change; the
 * caller applies it with expire() once the hash is written.
 */
const APPLY = `
local function apply(prefix, tkey, ix, x, cur, e, active, lease, rkey, ttl, set, del)
  local id, akey, kkey = ix[1], ix[4], ix[5]
  if cur.r and cur.r ~= rkey then redis.call('SREM', cur.r, id) end
  if active ~= cur.active then
    if active then redis.call('SADD', akey, id) else redis.call('SREM', akey, id) end
  end
  if lease ~= '' then
    if cur.l ~= lease then
      set[#set + 1] = 'l'; set[#set + 1] = lease
      redis.call('ZADD', prefix .. 'leases', lease, id)
    end
  elseif cur.l then
    del[#del + 1] = 'l'
    redis.call('ZREM', prefix .. 'leases', id)
  end
  if rkey ~= '' then
    if cur.r ~= rkey then
      set[#set + 1] = 'r'; set[#set + 1] = rkey
      redis.call('SADD', rkey, id)
    end
  elseif cur.r then
    del[#del + 1] = 'r'
  end
  if e == (cur.e or '') then return nil end
  local haskey = type(kkey) == 'string'
  if e ~= '' then
    set[#set + 1] = 'e'; set[#set + 1] = e
    redis.call('ZADD', prefix .. 'expiry', e, x)
    if haskey then redis.call('PEXPIRE', kkey, ttl) end
    return tonumber(ttl)
  end
  del[#del + 1] = 'e'
  redis.call('ZREM', prefix .. 'expiry', x)
  if haskey then redis.call('PERSIST', kkey) end
  return -1
end
-- Gives the task the native TTL apply decided (after its hash is written: a TTL needs the key to exist), and its
-- timeline list \`lkey\` when given: a list always has its task's TTL, so an append need not read it.
local function expire(tkey, ttl, lkey)
  if ttl == nil then return end
  if ttl > 0 then
    redis.call('PEXPIRE', tkey, ttl)
    if lkey then redis.call('PEXPIRE', lkey, ttl) end
  else
    redis.call('PERSIST', tkey)
    if lkey then redis.call('PERSIST', lkey) end
  end
end
local function is_active(status)
  return status == 'working' or status == 'input_required'
end
`;

/**
 * Files the task under its status for operators' reads (a zset per status, and one of every task), member `x[3]`
 * (the owner-zset member, so lexical order is creation order across owners too). `old`: the status before (nil for a
 * new task); the field itself goes in `set`.
 */
const STATUS = `
local function set_status(prefix, member, old, status, set)
  if old == status then return end
  if old then redis.call('ZREM', prefix .. 's:' .. old, member) end
  redis.call('ZADD', prefix .. 's:' .. status, 0, member)
  set[#set + 1] = 's'; set[#set + 1] = status
end
`;

/**
 * Byte accounting of stored records: each task's record bytes (hash `bytes`, kept apart from the task so a record
 * Redis expired on its own is still subtracted by the sweep; mirrored in the task's field `b`, so a write knows the
 * counted size from its own read), per owner (hash `ob`) and in total (`tb`). The owner is the tail of the owner-zset
 * key `ix[2]` (`<prefix>o:<owner>`). `bytes` nil forgets the task; `known` is its counted size, when already read.
 * A write that keeps the task active counts a change of less than SETTLE_BYTES only later (three commands fewer for a
 * claim or a progress report): an active task's count lags its record by less than that, a finished task's is exact.
 * Returns whether the count changed (the caller then writes `b`).
 */
const ACCOUNT = `
local SETTLE_BYTES = 1024
local function owner_of(prefix, ix)
  return string.sub(ix[2], #prefix + 3)
end
local function account(prefix, id, owner, bytes, known, settle)
  local old = tonumber(known or redis.call('HGET', prefix .. 'bytes', id) or '0')
  local delta = (bytes or 0) - old
  if bytes and (delta == 0 or (known and not settle and math.abs(delta) < SETTLE_BYTES)) then return false end
  if bytes then redis.call('HSET', prefix .. 'bytes', id, bytes) else redis.call('HDEL', prefix .. 'bytes', id) end
  if delta == 0 then return true end
  if redis.call('INCRBY', prefix .. 'tb', delta) == 0 then redis.call('DEL', prefix .. 'tb') end
  if redis.call('HINCRBY', prefix .. 'ob', owner, delta) == 0 then redis.call('HDEL', prefix .. 'ob', owner) end
  return true
end
`;

/** Removes a task and every index entry of it; works when the record itself is already gone. */
const DROP = `${ACCOUNT}
local function drop(prefix, x, rkey)
  local ix = cjson.decode(x)
  local id, kkey = ix[1], ix[5]
  local owner = owner_of(prefix, ix)
  account(prefix, id, owner, nil, nil, true)
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
 * the task's (`tkey`) own native expiry, so a timeline never outlives its task. `ttl`: the TTL the caller has just
 * given the task (-1: none); 'same' otherwise: a list that exists already has it (every script that changes a
 * task's TTL changes its list's too), a new list reads it.
 */
export const TIMELINE_APPEND_FN: string = `
local function append_timeline(lkey, tkey, max, from, ttl)
  local pushed = #ARGV - from + 1
  local n = redis.call('RPUSH', lkey, unpack(ARGV, from))
  if n > max then
    local first = redis.call('LINDEX', lkey, 0)
    redis.call('LTRIM', lkey, -(max - 1), -1)
    redis.call('LPUSH', lkey, first)
  end
  if ttl == 'same' then
    if n > pushed then return n end
    ttl = redis.call('PTTL', tkey)
  end
  if ttl > 0 then redis.call('PEXPIRE', lkey, ttl) elseif n > pushed then redis.call('PERSIST', lkey) end
  return n
end
`;

/**
 * KEYS[1] task. ARGV: d, version, x, expiresAt|'', active, lease|'', runnerKey|'', ttl, prefix, maxActive|'',
 * maxStored|'', status, maxStoredBytes|'', then the new task's timeline list|'', maxEntries, entries...
 * (TaskStore.insertsAlong). Returns {'ok'}, {'id'}, {'key', d, l} or {'limit', 'active'|'stored'|'stored_bytes'}: the
 * owner caps are checked in the same script as the write, so they hold across processes.
 */
export const INSERT: string = `${APPLY}${STATUS}${TIMELINE_APPEND_FN}${ACCOUNT}
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
account(prefix, ix[1], owner, #ARGV[1], nil, true)
if type(kkey) == 'string' then redis.call('SET', kkey, ix[1]) end
local set = {'d', ARGV[1], 'v', ARGV[2], 'x', ARGV[3], 'b', #ARGV[1]}
redis.call('ZADD', ix[2], 0, ix[3])
redis.call('ZADD', prefix .. 'all', 0, ix[3])
set_status(prefix, ix[3], nil, ARGV[12], set)
local ttl = apply(prefix, tkey, ix, ARGV[3], {}, ARGV[4], ARGV[5] == '1', ARGV[6], ARGV[7], ARGV[8], set, {})
redis.call('HSET', tkey, unpack(set))
expire(tkey, ttl)
-- A new task without an expiry has no TTL: its timeline takes none either.
if ARGV[14] and ARGV[14] ~= '' then append_timeline(ARGV[14], tkey, tonumber(ARGV[15]), 16, ttl or -1) end
return {'ok'}
`;

/**
 * The compare-and-set of `tkey` on ARGV 1-10 (see REPLACE); returns 0 when the version differed, else 1. Only what
 * changed is written: one HSET of the record and changed fields, one HDEL; a new TTL goes to the timeline list too.
 */
const REPLACE_FN = `
local function replace(tkey)
  local cur = redis.call('HMGET', tkey, 'v', 'x', 'r', 'l', 's', 'e', 'b')
  if cur[1] ~= ARGV[1] then return 0 end
  local prefix = ARGV[9]
  local lease = ARGV[6]
  -- A lease renewed since the writer read the task is kept when the runner stays the same.
  if lease ~= '' and cur[3] and cur[3] == ARGV[7] and cur[4] and tonumber(cur[4]) > tonumber(lease) then lease = cur[4] end
  local ix = cjson.decode(cur[2])
  local set = {'d', ARGV[2], 'v', ARGV[3]}
  local del = {}
  if account(prefix, ix[1], owner_of(prefix, ix), #ARGV[2], cur[7], ARGV[5] ~= '1') then
    set[#set + 1] = 'b'; set[#set + 1] = #ARGV[2]
  end
  set_status(prefix, ix[3], cur[5], ARGV[10], set)
  local was = {r = cur[3], l = cur[4], e = cur[6], active = is_active(cur[5])}
  local ttl = apply(prefix, tkey, ix, cur[2], was, ARGV[4], ARGV[5] == '1', lease, ARGV[7], ARGV[8], set, del)
  redis.call('HSET', tkey, unpack(set))
  if #del > 0 then redis.call('HDEL', tkey, unpack(del)) end
  expire(tkey, ttl, prefix .. 'tl:' .. ix[1])
  return 1
end
`;

/** KEYS[1] task. ARGV: expectedVersion, d, version, expiresAt|'', active, lease|'', runnerKey|'', ttl, prefix, status. */
export const REPLACE: string = `${APPLY}${STATUS}${ACCOUNT}${REPLACE_FN}
return replace(KEYS[1])
`;

/**
 * REPLACE, then with the write its timeline entries and its event (TaskStore.replacesAlong). ARGV 1-10 as REPLACE,
 * then: events channel, event payload, timeline list|'', maxEntries, entries...
 */
export const REPLACE_ALONG: string = `${APPLY}${STATUS}${ACCOUNT}${REPLACE_FN}${TIMELINE_APPEND_FN}
if replace(KEYS[1]) == 0 then return 0 end
if ARGV[13] ~= '' then append_timeline(ARGV[13], KEYS[1], tonumber(ARGV[14]), 15, 'same') end
redis.call('PUBLISH', ARGV[11], ARGV[12])
return 1
`;

/** KEYS[1] task. ARGV: prefix. Returns 1 when the task existed. */
export const DELETE: string = `${DROP}
local h = redis.call('HMGET', KEYS[1], 'x', 'r')
if not h[1] then return 0 end
drop(ARGV[1], h[1], h[2])
return 1
`;

/**
 * KEYS[1] task. ARGV: prefix, fetchedAt. Marks a terminal task's outcome delivered (the first mark stays): its id goes
 * in the owner's fetched zset (`f:<owner>`) and the store's (`fetched`), scored by when.
 */
export const MARK_FETCHED: string = `${ACCOUNT}
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
export const EVICT_FETCHED: string = `${DROP}
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
export const GET_BY_KEY: string = `
local id = redis.call('GET', KEYS[1])
if not id then return nil end
local h = redis.call('HMGET', ARGV[1] .. 't:' .. id, 'd', 'l')
if not h[1] then return nil end
return h
`;

/** KEYS[1] expiry zset. ARGV: now, limit, prefix. Returns {d, l, ...} of the removed tasks still present. */
export const SWEEP: string = `${DROP}
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
export const FIND_STALE: string = `
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
export const RENEW: string = `
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
export const BROWSE: string = `
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
