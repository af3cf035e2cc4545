package io.github.leaderelection.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import org.jspecify.annotations.Nullable;

/**
 * Records what a listener was told, and whether {@code isLeader()} was already false when
 * a revocation arrived.
 */
class RecordingListener implements LeaderElectionListener {

	record Revocation(long term, RevocationReason reason, boolean stillLeaderWhenDelivered) {
	}

	final List<Long> grantedTerms = new CopyOnWriteArrayList<>();

	final List<Revocation> revocations = new CopyOnWriteArrayList<>();

	final List<@Nullable LeaderInfo> leaderChanges = new CopyOnWriteArrayList<>();

	private volatile @Nullable LeaderElection election;

	void watching(LeaderElection election) {
		this.election = election;
	}

	@Override
	public void granted(Leadership leadership) {
		this.grantedTerms.add(leadership.term());
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		LeaderElection current = this.election;
		boolean stillLeader = current != null
				&& current.leadership().map(Leadership::term).filter((term) -> term == leadership.term()).isPresent();
		this.revocations.add(new Revocation(leadership.term(), reason, stillLeader));
	}

	@Override
	public void leaderChanged(String group, @Nullable LeaderInfo leader) {
		this.leaderChanges.add(leader);
	}

	List<RevocationReason> reasons() {
		return this.revocations.stream().map(Revocation::reason).toList();
	}

}
