package io.github.leaderelection.etcd;

import java.time.Duration;
import java.util.List;

import io.etcd.jetcd.Client;
import io.github.leaderelection.etcd.NodeLeases.Attachment;
import io.github.leaderelection.etcd.NodeLeases.Renewal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which keys on a shared etcd lease a renewal ends as orphans, when the holder renews its
 * groups in several calls at once after its renewals failed for a while (etcd was down,
 * the process paused): no request is sent, so no server is needed.
 */
class NodeLeasesTests {

	private static final long LEASE = 7;

	private static final long TTL_SECONDS = 1;

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** Never connected: the methods under test send nothing. */
	private final Client client = Client.builder().endpoints("http://127.0.0.1:1").build();

	private final NodeLeases leases = new NodeLeases(new EtcdLeases(this.client));

	@AfterEach
	void closeClient() {
		this.client.close();
	}

	/** Its last renewal began longer ago than the lease's TTL and a call timeout. */
	private void attachedLongAgo(String group) {
		this.leases.attach(group, LEASE, 11, System.nanoTime() - Duration.ofSeconds(5).toNanos());
	}

	@Test
	void aGroupWhoseRenewalIsUnderWayInAnotherCallIsNoOrphan() {
		attachedLongAgo("a");
		attachedLongAgo("b");
		Renewal ofA = this.leases.renewalBegins(List.of("a"));
		Renewal ofB = this.leases.renewalBegins(List.of("b"));
		// The renewal of b ends the keys on the lease that no renewal renews: not a's,
		// whose renewal, under way in another call, may succeed and restore its belief.
		assertThat(this.leases.orphans(LEASE, TTL_SECONDS, TIMEOUT)).isEmpty();
		assertThat(ofA.counts("a")).isTrue();
		assertThat(ofB.counts("b")).isTrue();
		this.leases.renewalOver(ofA);
		assertThat(this.leases.orphans(LEASE, TTL_SECONDS, TIMEOUT)).extracting(Attachment::group).containsExactly("a");
		this.leases.renewalOver(ofB);
	}

	@Test
	void aGroupWhoseRenewalFoundItHeldNoLongerCanBeAnOrphan() {
		attachedLongAgo("a");
		Renewal ofA = this.leases.renewalBegins(List.of("a"));
		// Its record names another holder now (forced away): the renewal cannot succeed.
		this.leases.cannotRenew(ofA, "a");
		assertThat(this.leases.orphans(LEASE, TTL_SECONDS, TIMEOUT)).extracting(Attachment::group).containsExactly("a");
		this.leases.renewalOver(ofA);
	}

	@Test
	void aRenewalThatBeginsWhileItsGroupsKeyIsBeingEndedDoesNotCountForIt() {
		attachedLongAgo("a");
		List<Attachment> orphans = this.leases.orphans(LEASE, TTL_SECONDS, TIMEOUT);
		assertThat(orphans).extracting(Attachment::group).containsExactly("a");
		// Its read may come before the end of the key: a success would restore a belief
		// in a group that another candidate takes at once.
		Renewal during = this.leases.renewalBegins(List.of("a"));
		assertThat(during.counts("a")).isFalse();
		assertThat(this.leases.orphans(LEASE, TTL_SECONDS, TIMEOUT)).as("ended once").isEmpty();
		this.leases.renewalOver(during);
		this.leases.orphanEnded(orphans.get(0));
		// Begun after the end was over, its read finds the record as the end left it.
		Renewal after = this.leases.renewalBegins(List.of("a"));
		assertThat(after.counts("a")).isTrue();
		this.leases.renewalOver(after);
	}

}
