package io.github.leaderelection.engine;

/**
 * How long a candidate that gave a lease up stays out of the race for it, so that another
 * candidate gets the first try: after a yield (two retry periods), after a leadership
 * that ended on store trouble or an answer that came too late (one). Once the store shows
 * a greater term than the one given up, another candidate had its try, and the stay-out
 * is over: staying out longer would only keep the group waiting, say when that candidate
 * hands it back at once, or, on a store that queues candidates, when this one is next in
 * line. A pure policy on the times it is given; not thread-safe (the elector's lock
 * guards it).
 */
final class StayOut {

	/** What to do about an acquisition now: see {@link #nextLook}. */
	static final long NOT_NOW = -1;

	private long untilNanos;

	private long term;

	private boolean active;

	/** Stays out for the given time after giving up a lease of the given term. */
	void start(long nowNanos, long durationNanos, long givenUpTerm) {
		this.untilNanos = nowNanos + durationNanos;
		this.term = givenUpTerm;
		this.active = true;
	}

	/** A term read from the store: a greater one than the term given up ends it. */
	void sawTerm(long storeTerm) {
		if (this.active && storeTerm > this.term) {
			this.active = false;
		}
	}

	/** The time left, zero once over. */
	long remaining(long nowNanos) {
		return this.active ? Math.max(0, this.untilNanos - nowNanos) : 0;
	}

	/**
	 * When to try to acquire, for a candidate that looks at the lease now: at once
	 * ({@code 0}); at the end of the stay-out when that falls within the next retry
	 * period, rather than a retry period later (after back-to-back yields, the one that
	 * yielded first must be back in the race before the one that yielded last, whose
	 * window ends later); or {@link #NOT_NOW}, at a look in the node's rounds within a
	 * retry period, where a greater term may have ended it meanwhile (a candidate that
	 * was not told of it would otherwise leave the group waiting out the whole window
	 * when the candidate that took it over hands it on at once: ZooKeeper tells only the
	 * next in line, a polling store nobody).
	 * @return 0, the delay until the stay-out ends, or {@link #NOT_NOW}
	 */
	long nextLook(long nowNanos, long retryPeriodNanos) {
		long left = remaining(nowNanos);
		return (left > retryPeriodNanos) ? NOT_NOW : left;
	}

}
