package io.github.leaderelection;

import java.util.Objects;
import java.util.function.LongPredicate;

/**
 * One term of leadership held by this instance: the fencing token to pass to writes, and
 * a cheap way for long-running work to ask whether it is still the leader.
 */
public final class Leadership {

	private final String group;

	private final String candidateId;

	private final long term;

	private final LongPredicate stillLeading;

	/**
	 * Creates a leadership; {@code stillLeading} answers, for a term, whether this
	 * instance still leads in it (no I/O).
	 */
	public Leadership(String group, String candidateId, long term, LongPredicate stillLeading) {
		this.group = Objects.requireNonNull(group, "group");
		this.candidateId = Objects.requireNonNull(candidateId, "candidateId");
		this.term = term;
		this.stillLeading = Objects.requireNonNull(stillLeading, "stillLeading");
	}

	public String group() {
		return this.group;
	}

	public String candidateId() {
		return this.candidateId;
	}

	/**
	 * The fencing token: strictly greater than every earlier term of the group. Elected
	 * terms start at 1; with {@code leader-election.enabled=false} this instance leads
	 * without an election in term 0, which a fence that no elected leader has written yet
	 * accepts.
	 */
	public long term() {
		return this.term;
	}

	/**
	 * Whether this instance still leads in this term. Costs no I/O; {@code false} forever
	 * once the term has ended, even if the instance later leads again in a newer term.
	 */
	public boolean isValid() {
		return this.stillLeading.test(this.term);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Leadership that && this.term == that.term && this.group.equals(that.group)
				&& this.candidateId.equals(that.candidateId);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.group, this.candidateId, this.term);
	}

	@Override
	public String toString() {
		return "Leadership[group=" + this.group + ", candidateId=" + this.candidateId + ", term=" + this.term + "]";
	}

}
