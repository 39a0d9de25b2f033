/*
 * Keys under the store's prefix P:
 *   P wh:s:<id>     hash: record, status (JSON), owner, name, ws/wc (watermark seq and cursor), end (the seq of its
 *                   terminated row once ending)
 *   P wh:o:<owner>  set of the owner's subscription ids;  P wh:n:<name>  set of a type's subscription ids
 *   P wh:ns:<len>:<name>:<scope>  those of them with that scope;  P wh:nu:<name>  those without one
 *   P wh:exp        zset of subscriptions with an expiry, by expiresAt
 *   P wh:seq        the row counter
 *   P wh:r:<seq>    hash: s (subscription), e (the entry's fixed part, JSON), k (kind), c (cursor), d (dueAt),
 *                   a (attempts), l (lastStatus), t (token), x ('1' when done); an absent field is null
 *   P wh:rs:<sub>   zset of the subscription's rows by seq;  P wh:ev:<sub>  its event rows not yet done
 *   P wh:gap:<sub>  the seq of its waiting (unclaimed) gap row
 *   P wh:due        zset of rows not done, by dueAt; members are zero-padded seqs, so ties go by seq
 * Every write is one script: atomic across the instances sharing the server.
 */

const KEYS_OF = `
local P = ARGV[1]
local function sub(id) return P .. 'wh:s:' .. id end
local function row(seq) return P .. 'wh:r:' .. seq end
local function member(seq) return string.format('%016d', tonumber(seq)) end
local function scoped(name, scope)
  if scope == '' then return P .. 'wh:nu:' .. name end
  return P .. 'wh:ns:' .. string.len(name) .. ':' .. name .. ':' .. scope
end
-- Makes a waiting terminated row due at once (what held it back is done or gone).
local function release(seq)
  if not seq then return end
  local key = row(seq)
  if redis.call('EXISTS', key) == 1 and redis.call('HGET', key, 'x') ~= '1' and not redis.call('HGET', key, 't') then
    redis.call('HSET', key, 'd', 0)
    redis.call('ZADD', P .. 'wh:due', 0, member(seq))
  end
end
-- Removes a subscription and its rows but terminated ones (which are then due at once).
local function remove(id)
  local key = sub(id)
  if redis.call('EXISTS', key) == 0 then return 0 end
  redis.call('SREM', P .. 'wh:o:' .. redis.call('HGET', key, 'owner'), id)
  redis.call('SREM', P .. 'wh:n:' .. redis.call('HGET', key, 'name'), id)
  redis.call('SREM', scoped(redis.call('HGET', key, 'name'), redis.call('HGET', key, 'scope') or ''), id)
  redis.call('ZREM', P .. 'wh:exp', id)
  redis.call('DEL', key, P .. 'wh:ev:' .. id, P .. 'wh:gap:' .. id)
  for _, seq in ipairs(redis.call('ZRANGE', P .. 'wh:rs:' .. id, 0, -1)) do
    if redis.call('HGET', row(seq), 'k') ~= 'terminated' then
      redis.call('DEL', row(seq))
      redis.call('ZREM', P .. 'wh:rs:' .. id, seq)
      redis.call('ZREM', P .. 'wh:due', member(seq))
    else
      release(seq)
    end
  end
  return 1
end
-- The first row before seq in the subscription that is not done, if any.
local function blocker(id, seq)
  local offset = 0
  while true do
    local page = redis.call('ZRANGEBYSCORE', P .. 'wh:rs:' .. id, '-inf', '(' .. seq, 'LIMIT', offset, 64)
    for _, s in ipairs(page) do
      if redis.call('HGET', row(s), 'x') ~= '1' then return s end
    end
    if #page < 64 then return nil end
    offset = offset + 64
  end
end
-- Adds a row. ARGV at i: entry, cursor, has cursor ('1'), dueAt.
local function insert(id, kind, i)
  local seq = redis.call('INCR', P .. 'wh:seq')
  redis.call('HSET', row(seq), 's', id, 'e', ARGV[i], 'k', kind, 'd', ARGV[i + 3], 'a', 0)
  if ARGV[i + 2] == '1' then redis.call('HSET', row(seq), 'c', ARGV[i + 1]) end
  redis.call('ZADD', P .. 'wh:rs:' .. id, seq, seq)
  redis.call('ZADD', P .. 'wh:due', ARGV[i + 3], member(seq))
  return seq
end
`;

/**
 * ARGV: P, id, owner, name, expiresAt ('' none), record, status ('' keep), maxPerOwner, initial status, scope ('' none;
 * a scope is a task id, never empty).
 */
const SAVE = `${KEYS_OF}
local id, owner, name, expires = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = sub(id)
local created = redis.call('EXISTS', key) == 0
if created then
  if redis.call('SCARD', P .. 'wh:o:' .. owner) >= tonumber(ARGV[8]) then return 'limit' end
  redis.call('HSET', key, 'status', ARGV[9])
else
  redis.call('SREM', P .. 'wh:o:' .. redis.call('HGET', key, 'owner'), id)
  redis.call('SREM', P .. 'wh:n:' .. redis.call('HGET', key, 'name'), id)
  redis.call('SREM', scoped(redis.call('HGET', key, 'name'), redis.call('HGET', key, 'scope') or ''), id)
end
redis.call('HSET', key, 'record', ARGV[6], 'owner', owner, 'name', name, 'scope', ARGV[10])
if ARGV[7] ~= '' then redis.call('HSET', key, 'status', ARGV[7]) end
redis.call('SADD', P .. 'wh:o:' .. owner, id)
redis.call('SADD', P .. 'wh:n:' .. name, id)
redis.call('SADD', scoped(name, ARGV[10]), id)
if expires == '' then redis.call('ZREM', P .. 'wh:exp', id) else redis.call('ZADD', P .. 'wh:exp', expires, id) end
if created then return 'created' end
return 'updated'`;

/** ARGV: P, id, status. */
const SET_STATUS = `${KEYS_OF}
if redis.call('EXISTS', sub(ARGV[2])) == 1 then redis.call('HSET', sub(ARGV[2]), 'status', ARGV[3]) end
return 0`;

/** ARGV: P, id, seq, cursor, has cursor ('1'). */
const ADVANCE = `${KEYS_OF}
local key = sub(ARGV[2])
if redis.call('EXISTS', key) == 0 then return 0 end
local at = redis.call('HGET', key, 'ws')
if at and tonumber(at) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', key, 'ws', ARGV[3])
if ARGV[5] == '1' then redis.call('HSET', key, 'wc', ARGV[4]) else redis.call('HDEL', key, 'wc') end
return 1`;

/** ARGV: P, id. */
const DELETE_SUB = `${KEYS_OF}
return remove(ARGV[2])`;

/** ARGV: P, subscription, kind, entry, cursor, has cursor ('1'), dueAt, maxQueued. Replies the seq, or -1 when full. */
const ENQUEUE = `${KEYS_OF}
local id, kind = ARGV[2], ARGV[3]
if kind ~= 'terminated' and redis.call('HEXISTS', sub(id), 'end') == 1 then return -1 end
if kind == 'gap' then
  local waiting = redis.call('GET', P .. 'wh:gap:' .. id)
  if waiting then
    if ARGV[6] == '1' then redis.call('HSET', row(waiting), 'c', ARGV[5]) else redis.call('HDEL', row(waiting), 'c') end
    return tonumber(waiting)
  end
elseif kind == 'event' then
  if redis.call('ZCARD', P .. 'wh:ev:' .. id) >= tonumber(ARGV[8]) then return -1 end
end
local seq = insert(id, kind, 4)
if kind == 'event' then redis.call('ZADD', P .. 'wh:ev:' .. id, seq, seq) end
if kind == 'gap' then redis.call('SET', P .. 'wh:gap:' .. id, seq) end
return seq`;

/** ARGV: P, id, entry, cursor (''), has cursor ('0'), dueAt. Replies the terminated row's seq, or -1. */
const END = `${KEYS_OF}
local id = ARGV[2]
if redis.call('EXISTS', sub(id)) == 0 then return -1 end
local ending = redis.call('HGET', sub(id), 'end')
if ending then return tonumber(ending) end
local seq = insert(id, 'terminated', 3)
redis.call('HSET', sub(id), 'end', seq)
return seq`;

/**
 * ARGV: P, token, now, lease end, limit. Replies the claimed seqs. A terminated row with an unsettled row before it
 * waits until that row's due time (or until it is settled or removed, which makes it due at once); claiming an ending
 * subscription's terminated row removes the subscription (spec TS8, TS9).
 */
const CLAIM = `${KEYS_OF}
local due = redis.call('ZRANGEBYSCORE', P .. 'wh:due', '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[5]))
local seqs = {}
for _, m in ipairs(due) do
  local seq = tostring(tonumber(m))
  local key = row(seq)
  local id = redis.call('HGET', key, 's')
  local held = redis.call('HGET', key, 'k') == 'terminated' and blocker(id, seq)
  if held then
    local at = redis.call('HGET', row(held), 'd')
    redis.call('HSET', key, 'd', at)
    redis.call('ZADD', P .. 'wh:due', at, m)
  else
    redis.call('HSET', key, 't', ARGV[2], 'd', ARGV[4])
    redis.call('HINCRBY', key, 'a', 1)
    redis.call('ZADD', P .. 'wh:due', ARGV[4], m)
    if redis.call('GET', P .. 'wh:gap:' .. id) == seq then redis.call('DEL', P .. 'wh:gap:' .. id) end
    if redis.call('HGET', sub(id), 'end') == seq then remove(id) end
    seqs[#seqs + 1] = tonumber(seq)
  end
end
return seqs`;

/** ARGV: P, seq, token, done ('1'), lastStatus, dueAt. */
const SETTLE = `${KEYS_OF}
local key = row(ARGV[2])
if redis.call('HGET', key, 't') ~= ARGV[3] or redis.call('HGET', key, 'x') == '1' then return 0 end
redis.call('HDEL', key, 't')
redis.call('HSET', key, 'l', ARGV[5])
if ARGV[4] == '1' then
  local id = redis.call('HGET', key, 's')
  redis.call('HSET', key, 'x', '1')
  redis.call('ZREM', P .. 'wh:due', member(ARGV[2]))
  redis.call('ZREM', P .. 'wh:ev:' .. id, ARGV[2])
  -- An ending subscription's terminated row may be waiting for this one.
  local ending = redis.call('HGET', sub(id), 'end')
  if ending and not blocker(id, ending) then release(ending) end
else
  redis.call('HSET', key, 'd', ARGV[6])
  redis.call('ZADD', P .. 'wh:due', ARGV[6], member(ARGV[2]))
end
return 1`;

/** ARGV: P, seq... */
const DELETE_ROWS = `${KEYS_OF}
for i = 2, #ARGV do
  local seq = ARGV[i]
  local id = redis.call('HGET', row(seq), 's')
  if id then
    redis.call('ZREM', P .. 'wh:rs:' .. id, seq)
    redis.call('ZREM', P .. 'wh:ev:' .. id, seq)
    if redis.call('GET', P .. 'wh:gap:' .. id) == seq then redis.call('DEL', P .. 'wh:gap:' .. id) end
  end
  redis.call('ZREM', P .. 'wh:due', member(seq))
  redis.call('DEL', row(seq))
end
return 0`;

/** The outbox's scripts, by the command name each is defined as. */
export const WEBHOOK_SCRIPTS = {
  mcpTasksWebhookSave: SAVE,
  mcpTasksWebhookSetStatus: SET_STATUS,
  mcpTasksWebhookAdvance: ADVANCE,
  mcpTasksWebhookDeleteSub: DELETE_SUB,
  mcpTasksWebhookEnqueue: ENQUEUE,
  mcpTasksWebhookEnd: END,
  mcpTasksWebhookClaim: CLAIM,
  mcpTasksWebhookSettle: SETTLE,
  mcpTasksWebhookDeleteRows: DELETE_ROWS,
};
