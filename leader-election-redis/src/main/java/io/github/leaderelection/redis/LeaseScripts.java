package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The Lua scripts of a {@link RedisLeaseStore}: each operation is one script, so Redis
 * runs it atomically, and {@code TIME} inside it is the only clock.
 *
 * <p>
 * Every script gets the two keys of one group, in one hash slot (the batch scripts get
 * them for several groups in turn, all in one slot):
 * <ol>
 * <li>the lease, {@code "<term>:<holder>"}, set with {@code PX} so that Redis's own
 * expiry ends it; it exists only while a lease is live;</li>
 * <li>the record, a hash without expiry: {@code holder} ({@code ""} for none),
 * {@code term}, {@code lease_end} and {@code active_from} (server milliseconds), and
 * {@code server}, the run id of the Redis process whose grant wrote the record
 * ({@code ""} when no process vouches for it).</li>
 * </ol>
 * Renew, release and clear never change {@code server}: only a grant, which waits out
 * whatever it cannot know, may vouch for the record again.
 *
 * <p>
 * The scripts of the list of live candidates ({@link #KEEP_CANDIDATE_ALIVE},
 * {@link #REMOVE_CANDIDATE}) get instead the two keys of that list, in one hash slot: a
 * sorted set of candidates scored by the end of their entry (server milliseconds), and a
 * hash of their weights.
 */
enum LeaseScripts {

	/**
	 * Returns {@code {holder, term, expiresInMs, activeInMs}}, or nothing for an unknown
	 * group.
	 */
	READ("""
			local now = clock()
			return describe(KEYS[1], KEYS[2], now)
			"""),

	/**
	 * KEYS: the lease and the record of each group in turn. Returns, for each group, what
	 * {@link #READ} would, all judged at one instant.
	 */
	READ_ALL("""
			local now = clock()
			local leases = {}
			for i = 1, #KEYS / 2 do
			  leases[i] = describe(KEYS[2 * i - 1], KEYS[2 * i], now)
			end
			return leases
			"""),

	/**
	 * ARGV: candidate, lease milliseconds, highest term the calling store has seen of the
	 * group, the holder of the live lease it last saw in that term ({@code ""} for none),
	 * the milliseconds that lease has left by the store's reading, the milliseconds a
	 * grant on a lost record waits (at least the lease's), and the highest term in which
	 * the candidate gave the group up (0 for none). Returns {@code {holder, term,
	 * expiresInMs, activeInMs, lost}}, {@code lost} being 1 when the record was missing,
	 * older than the term seen, named the candidate in a term it gave up or named another
	 * holder than the one seen live in the same term, or nothing when another candidate
	 * holds a live lease.
	 */
	ACQUIRE("""
			local candidate, duration = ARGV[1], tonumber(ARGV[2])
			local now, micros = clock()
			local term, active_from, lost = take(KEYS[1], KEYS[2], candidate, duration, tonumber(ARGV[3]), ARGV[4],
			  tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), now, micros)
			if not term then
			  return {}
			end
			return {candidate, term, duration, active_from - now, lost}
			"""),

	/**
	 * KEYS: the lease and the record of each group in turn; ARGV: candidate, lease
	 * milliseconds, then for each group in turn what {@link #ACQUIRE} gets after those:
	 * the highest term seen, the holder seen live in it, the milliseconds left, the wait
	 * on a lost record and the term given up. Takes each group as {@link #ACQUIRE} would,
	 * all at one instant, and returns {@code {position, term, activeInMs, lost, ...}} for
	 * each group taken (positions from 1), nothing for a group that another candidate
	 * holds.
	 */
	ACQUIRE_ALL("""
			local candidate, duration = ARGV[1], tonumber(ARGV[2])
			local now, micros = clock()
			local taken = {}
			for i = 1, #KEYS / 2 do
			  local term, active_from, lost = take(KEYS[2 * i - 1], KEYS[2 * i], candidate, duration,
			    tonumber(ARGV[5 * i - 2]), ARGV[5 * i - 1], tonumber(ARGV[5 * i]), tonumber(ARGV[5 * i + 1]),
			    tonumber(ARGV[5 * i + 2]), now, micros)
			  if term then
			    taken[#taken + 1] = i
			    taken[#taken + 1] = term
			    taken[#taken + 1] = active_from - now
			    taken[#taken + 1] = lost
			  end
			end
			return taken
			"""),

	/**
	 * ARGV: holder, term, lease milliseconds. Returns {@code {1}} if renewed, else
	 * {@code {0}}.
	 */
	RENEW("""
			return {extend(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), clock()) and 1 or 0}
			"""),

	/**
	 * KEYS: the lease and the record of each group in turn; ARGV: lease milliseconds,
	 * then the holder and the term of each group in turn. Renews each group as
	 * {@link #RENEW} would, all at one instant, and returns the positions (from 1) of the
	 * groups renewed.
	 */
	RENEW_ALL("""
			local duration, now = tonumber(ARGV[1]), clock()
			local renewed = {}
			for i = 1, #KEYS / 2 do
			  if extend(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1], duration, now) then
			    renewed[#renewed + 1] = i
			  end
			end
			return renewed
			"""),

	/**
	 * ARGV: holder, term, channel to announce on ({@code ""} for none). Returns
	 * {@code {1}} if released.
	 */
	RELEASE("""
			if not give_up(KEYS[1], KEYS[2], ARGV[1], ARGV[2], clock()) then
			  return {0}
			end
			if ARGV[3] ~= '' then
			  redis.call('PUBLISH', ARGV[3], 'released')
			end
			return {1}
			"""),

	/**
	 * KEYS: the lease and the record of each group in turn; ARGV: the holder and the term
	 * of each group in turn. Releases each group as {@link #RELEASE} would, without
	 * announcing it: it gives back leases that were taken but never acted on (too few
	 * replicas acknowledged them), which an announcement would only make every follower
	 * try, and fail, at once. Returns the positions (from 1) of the groups released.
	 */
	RELEASE_ALL("""
			local now, released = clock(), {}
			for i = 1, #KEYS / 2 do
			  if give_up(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], ARGV[2 * i], now) then
			    released[#released + 1] = i
			  end
			end
			return released
			"""),

	/**
	 * ARGV: candidate, highest term the calling store has seen, channel. Returns
	 * {@code {1}} if the candidate was named, {@code {0}} if it already held the lease.
	 */
	FORCE("""
			local target, seen = ARGV[1], tonumber(ARGV[2])
			local now, micros = clock()
			local rec, live = record(KEYS[2]), lease(KEYS[1])
			local holder = live and live.holder or (rec and rec.holder) or ''
			if holder == target then
			  return {0}
			end
			local term, lease_end, active_from, server
			if rec then
			  term, lease_end, active_from, server = rec.term + 1, rec.lease_end, rec.active_from, rec.server
			else
			  -- Vouch for a new record only where a first election would be at once.
			  term, lease_end, active_from = math.max(seen + 1, micros), now, now
			  server = (not live and seen == 0) and run_id() or ''
			end
			if live then
			  term = math.max(term, live.term + 1)
			  lease_end = math.max(lease_end, now + live.ttl)
			end
			term = math.max(term, micros)
			if lease_end > now then
			  redis.call('SET', KEYS[1], int(term) .. ':' .. target, 'PX', lease_end - now)
			end
			redis.call('HSET', KEYS[2], 'holder', target, 'term', int(term), 'lease_end', int(lease_end),
			  'active_from', int(active_from), 'server', server)
			redis.call('PUBLISH', ARGV[3], 'forced')
			return {1}
			"""),

	/** ARGV: channel. Returns {@code {1}} if there was a record to clear. */
	CLEAR("""
			local rec, live = record(KEYS[2]), lease(KEYS[1])
			if not rec and not live then
			  return {0}
			end
			local now = clock()
			local lease_end = rec and rec.lease_end or now
			if live then
			  lease_end = math.max(lease_end, now + live.ttl)
			end
			if not rec then
			  redis.call('HSET', KEYS[2], 'term', int(live.term), 'active_from', int(now), 'server', '')
			end
			redis.call('DEL', KEYS[1])
			redis.call('HSET', KEYS[2], 'holder', '', 'lease_end', int(lease_end))
			redis.call('PUBLISH', ARGV[1], 'cleared')
			return {1}
			"""),

	/**
	 * KEYS: the candidates' entry ends and their weights; ARGV: candidate, weight, entry
	 * milliseconds. Keeps the candidate's entry until that long from now, deletes the
	 * entries that have run out, and returns every live candidate, this one included, as
	 * {@code {candidate, weight, ...}}.
	 */
	KEEP_CANDIDATE_ALIVE("""
			local now = clock()
			redis.call('ZADD', KEYS[1], int(now + tonumber(ARGV[3])), ARGV[1])
			redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
			-- An entry ends at its score, inclusive, as a lease does at its end.
			local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', int(now))
			redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', int(now))
			in_chunks(expired, function(chunk) redis.call('HDEL', KEYS[2], unpack(chunk)) end)
			-- Both keys go when the last entry ends, so that a list nobody keeps leaves nothing behind.
			local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
			redis.call('PEXPIRE', KEYS[1], int(tonumber(last[2]) - now))
			redis.call('PEXPIRE', KEYS[2], int(tonumber(last[2]) - now))
			local candidates, live = redis.call('ZRANGE', KEYS[1], 0, -1), {}
			in_chunks(candidates, function(chunk)
			  local weights = redis.call('HMGET', KEYS[2], unpack(chunk))
			  for i, candidate in ipairs(chunk) do
			    -- Both keys are written together; a weight missing all the same (a key deleted by
			    -- hand) leaves the candidate out until its next keep-alive writes it again.
			    if weights[i] then
			      live[#live + 1] = candidate
			      live[#live + 1] = tonumber(weights[i])
			    end
			  end
			end)
			return live
			"""),

	/**
	 * KEYS: as for {@link #KEEP_CANDIDATE_ALIVE}; ARGV: candidate. Returns {@code {1}} if
	 * the candidate had an entry, else {@code {0}}.
	 */
	REMOVE_CANDIDATE("""
			local removed = redis.call('ZREM', KEYS[1], ARGV[1])
			redis.call('HDEL', KEYS[2], ARGV[1])
			return {removed}
			"""),

	/**
	 * KEYS: a job's run record, a hash of {@code tick}, {@code holder}, {@code term},
	 * {@code started}, {@code ended} (missing while the run goes on) and {@code outcome}.
	 * Returns those six fields ({@code ""} for a missing {@code ended}), or nothing for a
	 * job that never ran.
	 */
	READ_RUN("""
			local r = redis.call('HMGET', KEYS[1], 'tick', 'holder', 'term', 'started', 'ended', 'outcome')
			if not r[1] then
			  return {}
			end
			return {r[1], r[2], r[3], r[4], r[5] or '', r[6]}
			"""),

	/**
	 * KEYS: the group's index of jobs (see {@link #CLAIM_RUN}); ARGV: the prefix of the
	 * group's run record keys, to which a job's name is appended. Returns, for each job
	 * of the index whose run record exists, its name and the six fields {@link #READ_RUN}
	 * returns, one job after another in no particular order.
	 *
	 * <p>
	 * The run records are read by keys the script builds, not by keys it is given: the
	 * caller does not know the jobs before the index is read, and two scripts would let a
	 * claim in between list a job without its run. Those keys share the index's hash tag,
	 * so they are in its slot on a Cluster, the slot the script is sent to.
	 */
	READ_RUNS("""
			local runs = {}
			for _, job in ipairs(redis.call('SMEMBERS', KEYS[1])) do
			  local r = redis.call('HMGET', ARGV[1] .. job, 'tick', 'holder', 'term', 'started', 'ended', 'outcome')
			  if r[1] then
			    for _, field in ipairs({job, r[1], r[2], r[3], r[4], r[5] or '', r[6]}) do
			      runs[#runs + 1] = field
			    end
			  end
			end
			return runs
			"""),

	/**
	 * KEYS: the lease and the record of the group, the job's run record, and the group's
	 * index of jobs, a set of the names of its jobs that have run records; ARGV: holder,
	 * term, tick, the least milliseconds since the last tick, started, outcome, job.
	 * Writes the run only while the live lease and the record have the holder and term,
	 * and only for a tick later than the last one's by at least that much, from a term no
	 * older, and adds the job to the index. Returns {@code {1}} if claimed, else
	 * {@code {0}}.
	 */
	CLAIM_RUN("""
			local holder, term, tick = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
			local live, rec = lease(KEYS[1]), record(KEYS[2])
			if not live or not rec or live.holder ~= holder or live.term ~= term or rec.holder ~= holder
			    or rec.term ~= term then
			  return {0}
			end
			local last = redis.call('HMGET', KEYS[3], 'tick', 'term')
			if last[1] and (tick <= tonumber(last[1]) or tick - tonumber(last[1]) < tonumber(ARGV[4])
			    or term < tonumber(last[2])) then
			  return {0}
			end
			redis.call('DEL', KEYS[3])
			redis.call('HSET', KEYS[3], 'tick', ARGV[3], 'holder', holder, 'term', ARGV[2], 'started', ARGV[5],
			  'outcome', ARGV[6])
			redis.call('SADD', KEYS[4], ARGV[7])
			return {1}
			"""),

	/**
	 * KEYS: the job's run record; ARGV: tick, holder, term, ended, outcome. Writes the
	 * end only while the record is of that run. Returns {@code {1}} if written, else
	 * {@code {0}}.
	 */
	FINISH_RUN("""
			local r = redis.call('HMGET', KEYS[1], 'tick', 'holder', 'term')
			if r[1] ~= ARGV[1] or r[2] ~= ARGV[2] or r[3] ~= ARGV[3] then
			  return {0}
			end
			redis.call('HSET', KEYS[1], 'ended', ARGV[4], 'outcome', ARGV[5])
			return {1}
			""");

	/**
	 * The most groups that one batch script takes: enough for a node of a few thousand
	 * groups to renew, read or acquire them all with one script per call, which is what
	 * Redis counts as requests. Redis serves nobody else while a script runs, and a
	 * script costs 5 to 17 microseconds per group (three to five Redis commands each): a
	 * renewal of this many groups ran for 60 to 75 ms on a two-CPU machine with Redis
	 * 7.0, and up to 170 ms while the machine was busy, well below Redis's 5 s
	 * busy-script limit and the retry period. A larger batch is split rather than stall
	 * other clients longer. The scripts never {@code unpack} their keys or arguments
	 * (Lua's stack holds about 8,000 values), so this many fit.
	 */
	static final int MAX_GROUPS = 10_000;

	private static final String PRELUDE = """
			local function clock()
			  local t = redis.call('TIME')
			  local seconds, micros = tonumber(t[1]), tonumber(t[2])
			  return seconds * 1000 + math.floor(micros / 1000), seconds * 1000000 + micros
			end
			local function int(n)
			  return string.format('%.0f', n)
			end
			local function record(key)
			  local r = redis.call('HMGET', key, 'holder', 'term', 'lease_end', 'active_from', 'server')
			  if not r[2] then
			    return nil
			  end
			  return {holder = r[1] or '', term = tonumber(r[2]), lease_end = tonumber(r[3]) or 0,
			    active_from = tonumber(r[4]) or 0, server = r[5] or ''}
			end
			local function lease(key)
			  local value = redis.call('GET', key)
			  if not value then
			    return nil
			  end
			  local colon = string.find(value, ':', 1, true)
			  return {term = tonumber(string.sub(value, 1, colon - 1)), holder = string.sub(value, colon + 1),
			    ttl = redis.call('PTTL', key)}
			end
			-- What READ returns: {holder, term, expiresInMs, activeInMs}, or {} for an unknown group.
			local function describe(lease_key, record_key, now)
			  local rec, live = record(record_key), lease(lease_key)
			  if not rec and not live then
			    return {}
			  end
			  local holder, term, expires_in, active_in = '', 0, 0, 0
			  if rec then
			    holder, term, expires_in = rec.holder, rec.term, rec.lease_end - now
			    active_in = math.max(0, rec.active_from - now)
			  end
			  if live then
			    holder, term, expires_in = live.holder, live.term, live.ttl
			  elseif holder ~= '' then
			    -- The lease key is what acquire looks at: without it the lease is over.
			    expires_in = math.min(expires_in, 0)
			  end
			  return {holder, term, expires_in, active_in}
			end
			-- What RENEW does: only the exact holder and term extend, judged by the record, which is
			-- missing after a data loss (so nothing is renewed) and whose server field a renewal
			-- never changes (only a grant may vouch for the record again).
			local function extend(lease_key, record_key, holder, term, duration, now)
			  local rec = record(record_key)
			  if not rec or rec.holder ~= holder or rec.term ~= tonumber(term) then
			    return false
			  end
			  redis.call('SET', lease_key, term .. ':' .. holder, 'PX', duration)
			  redis.call('HSET', record_key, 'lease_end', int(now + duration))
			  return true
			end
			-- Calls fn with the items in lists of at most 1000, since unpack of a long list overflows
			-- Lua's stack.
			local function in_chunks(items, fn)
			  for from = 1, #items, 1000 do
			    fn({unpack(items, from, math.min(#items, from + 999))})
			  end
			end
			-- The run id of this Redis process, asked once per script run (a batch asks it once for all
			-- its groups): locals of a script live for one run.
			local server_id
			local function run_id()
			  if not server_id then
			    server_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
			  end
			  return server_id
			end
			-- What ACQUIRE does for one group, judged at the instant now (micros in microseconds): takes
			-- the lease for the candidate unless another candidate holds it live, and returns the new
			-- term, the instant from which the candidate may act, and 1 when the record was missing or
			-- older than the term seen, named the candidate in a term it gave up, or named another holder
			-- than the one seen live in the same term (SeenTerms), else 0; nothing when it was not taken.
			local function take(lease_key, record_key, candidate, duration, seen, seen_holder, seen_left, lost_wait,
			  given_up, now, micros)
			  local rec, live = record(record_key), lease(lease_key)
			  if live and live.holder ~= candidate then
			    return nil
			  end
			  local server = run_id()
			  local term, previous_end
			  -- A record that names the candidate in a term it released, or whose renewal was refused, went
			  -- back to an older copy: another candidate may lead by now. One that names another holder than
			  -- the live lease the caller saw in the same term was changed by hand: every grant takes a new term.
			  local went_back = rec and ((rec.holder == candidate and rec.term <= given_up)
			    or (rec.term == seen and rec.holder ~= '' and seen_holder ~= '' and rec.holder ~= seen_holder))
			  if rec and rec.server == server and seen <= rec.term and not went_back then
			    -- Vouched for by a grant on this very process, which has lost nothing since (a lost
			    -- record is missing, and one older than a term the caller saw is not this one):
			    -- nobody before acts after the recorded lease end.
			    term = rec.term + 1
			    previous_end = math.max(rec.lease_end, rec.active_from)
			  elseif not rec and not live and seen == 0 then
			    -- Never led, as far as anyone here can tell.
			    term = micros
			    previous_end = now
			  else
			    -- Data lost (restart without persistence, FLUSHALL) or not vouched for by this process
			    -- (restart from disk, failover, resharding): an earlier holder may act for up to a lease
			    -- duration, with terms that are unknown but below the microseconds of the clock.
			    term = micros
			    previous_end = now + math.max(duration, lost_wait)
			  end
			  -- Never below the clock either, so that no term is handed out twice, not even after the record
			  -- went back (a restore, a hand edit) before a candidate that had not seen the later one took it.
			  term = math.max(term, seen + 1, rec and rec.term + 1 or 1, live and live.term + 1 or 1, micros)
			  if live then
			    previous_end = math.max(previous_end, now + live.ttl)
			  end
			  -- The record still names the holder and term of a lease the caller saw live for longer:
			  -- it went back (a restore of an older copy, a hand edit), and that holder may believe.
			  if rec and seen_left > 0 and seen_holder ~= '' and rec.holder == seen_holder
			    and seen_holder ~= candidate and rec.term == seen then
			    previous_end = math.max(previous_end, now + seen_left)
			  end
			  local active_from = math.max(now, previous_end)
			  redis.call('SET', lease_key, int(term) .. ':' .. candidate, 'PX', duration)
			  redis.call('HSET', record_key, 'holder', candidate, 'term', int(term), 'lease_end', int(now + duration),
			    'active_from', int(active_from), 'server', server)
			  local lost = (not rec and seen > 0) or (rec and (rec.term < seen or rec.term < 0)) or went_back
			  return term, active_from, lost and 1 or 0
			end
			-- What RELEASE does for one group: only the exact holder and term end the lease, at once but
			-- not before active_from, since until then the holder before this one may still act.
			local function give_up(lease_key, record_key, holder, term, now)
			  local rec = record(record_key)
			  if not rec or rec.holder ~= holder or rec.term ~= tonumber(term) then
			    return false
			  end
			  redis.call('DEL', lease_key)
			  redis.call('HSET', record_key, 'holder', '',
			    'lease_end', int(math.max(math.min(rec.lease_end, now), rec.active_from)))
			  return true
			end
			""";

	private final String source;

	private final String sha1;

	LeaseScripts(String body) {
		this.source = PRELUDE + body;
		this.sha1 = sha1(this.source);
	}

	/**
	 * Whether a reply says that the script wrote: only then does a store that asks for
	 * replica acknowledgements wait for them.
	 */
	boolean wrote(List<Object> reply) {
		return switch (this) {
			case READ, READ_ALL, READ_RUN, READ_RUNS -> false;
			case RENEW_ALL, ACQUIRE_ALL, RELEASE_ALL -> !reply.isEmpty();
			default -> !reply.isEmpty() && !Long.valueOf(0).equals(reply.get(0));
		};
	}

	String source() {
		return this.source;
	}

	String sha1() {
		return this.sha1;
	}

	private static String sha1(String source) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
