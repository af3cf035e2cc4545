package io.github.leaderelection.test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;

/**
 * Makes this instance the leader or a follower of a group in a test, and returns once the
 * change has been delivered to every listener: the {@code LeaderGrantedEvent} or
 * {@code LeaderRevokedEvent} and {@code LeaderChangedEvent} have been published,
 * leader-only lifecycle beans have been started or stopped.
 *
 * <pre class="code">
 * &#64;SpringBootTest(properties = "leader-election.backend=in-memory")
 * class DispatcherTests {
 *
 *     &#64;Autowired
 *     LeaderElectionTestSupport election;
 *
 *     &#64;Test
 *     void dispatchesOnlyOnTheLeader() {
 *         election.becomeFollower();
 *         ...
 *         election.becomeLeader();
 *         ...
 *     }
 * }
 * </pre>
 *
 * <p>
 * It needs the in-memory backend ({@code leader-election.backend=in-memory}), which it
 * drives as an administrator would: to make this instance a follower, another candidate
 * (that does not exist, {@value #OTHER_CANDIDATE}) is forced to lead and takes a lease of
 * a day; to make it the leader, that lease is released. Leadership then stays as set
 * until the next call, or until the test gives it up ({@code yieldLeadership()}).
 * {@link AsLeader @AsLeader} and {@link AsFollower @AsFollower} do the same before each
 * test.
 *
 * <p>
 * It knows what has been delivered by being a {@link LeaderElectionListener} itself, the
 * last one: once it has seen a change, every other listener has. The auto-configured bean
 * is added to the registry with the other listener beans, and comes last by its order;
 * one created by hand must be added to the registry after every other listener, before
 * the election starts.
 */
public class LeaderElectionTestSupport implements LeaderElectionListener, Ordered {

	/** The candidate that leads while this instance is made a follower. */
	public static final String OTHER_CANDIDATE = "leader-election-test-other-candidate";

	private static final Duration OTHER_LEASE = Duration.ofDays(1);

	private final LeaderElectionRegistry registry;

	private final String defaultGroup;

	private final Duration timeout;

	private final Object monitor = new Object();

	/** Per group, the last grant delivered. */
	private final Map<String, Leadership> granted = new HashMap<>();

	/** Per group, the last leader delivered. */
	private final Map<String, Optional<LeaderInfo>> leaders = new HashMap<>();

	/**
	 * Creates a test support that waits for each change at most twice the lease duration
	 * plus ten seconds.
	 * @param registry the application's elections
	 * @param defaultGroup the application's group
	 */
	public LeaderElectionTestSupport(LeaderElectionRegistry registry, String defaultGroup) {
		this(registry, defaultGroup, defaultTimeout(registry));
	}

	/**
	 * Creates a test support.
	 * @param registry the application's elections
	 * @param defaultGroup the application's group
	 * @param timeout how long to wait for each change before failing
	 */
	public LeaderElectionTestSupport(LeaderElectionRegistry registry, String defaultGroup, Duration timeout) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
		this.timeout = Objects.requireNonNull(timeout, "timeout");
	}

	private static Duration defaultTimeout(LeaderElectionRegistry registry) {
		Duration lease = (registry instanceof LeaderElectionEngine engine) ? engine.timing().leaseDuration()
				: Duration.ofSeconds(15);
		return lease.multipliedBy(2).plusSeconds(10);
	}

	/** The application's group, used by the methods that name none. */
	public String defaultGroup() {
		return this.defaultGroup;
	}

	/**
	 * Makes this instance the leader of the application's group.
	 * @return the leadership granted
	 * @see #becomeLeader(String)
	 */
	public Leadership becomeLeader() {
		return becomeLeader(this.defaultGroup);
	}

	/**
	 * Makes this instance the leader of a group (joining it if needed), and waits until
	 * the grant has been delivered to every listener.
	 * @param group the group
	 * @return the leadership granted
	 * @throws IllegalStateException if the backend is not in-memory, or the change took
	 * longer than the timeout
	 */
	public Leadership becomeLeader(String group) {
		LeaderElectionEngine engine = engine();
		LeaderElection election = this.registry.join(group);
		Leadership current = election.leadership().orElse(null);
		if (current != null && isDelivered(current)) {
			return current;
		}
		LeaseStore store = engine.store();
		Duration callTimeout = engine.timing().storeCallTimeout();
		// Free the lease that another candidate holds (or was forced to), so this one
		// takes it now.
		store.read(group, callTimeout)
			.filter((lease) -> lease.holder() != null && !lease.isHeldBy(election.candidateId()))
			.ifPresent((lease) -> store.release(lease, callTimeout));
		Leadership[] granted = new Leadership[1];
		await("become the leader of group '" + group + "'", () -> {
			granted[0] = election.leadership().filter(this::isDelivered).orElse(null);
			return granted[0] != null;
		});
		return granted[0];
	}

	/**
	 * Makes this instance a follower of the application's group.
	 * @see #becomeFollower(String)
	 */
	public void becomeFollower() {
		becomeFollower(this.defaultGroup);
	}

	/**
	 * Makes this instance a follower of a group (joining it if needed): another
	 * candidate, {@value #OTHER_CANDIDATE}, leads it. Waits until this instance's
	 * revocation (if it led) and the new leader have been delivered to every listener.
	 * @param group the group
	 * @throws IllegalStateException if the backend is not in-memory, or the change took
	 * longer than the timeout
	 */
	public void becomeFollower(String group) {
		LeaderElectionEngine engine = engine();
		LeaderElection election = this.registry.join(group);
		LeaseStore store = engine.store();
		Duration callTimeout = engine.timing().storeCallTimeout();
		Lease[] taken = new Lease[1];
		await("let another candidate lead group '" + group + "'", () -> {
			// Forcing drops this instance's leadership at once and keeps the lease from
			// being taken before the other candidate takes it for a day; it fails only in
			// a race with this instance's first acquire, and is then tried again.
			election.forceLeader(OTHER_CANDIDATE);
			taken[0] = store.tryAcquire(group, OTHER_CANDIDATE, OTHER_LEASE, callTimeout).orElse(null);
			return taken[0] != null;
		});
		LeaderInfo other = new LeaderInfo(group, OTHER_CANDIDATE, taken[0].term());
		await("see group '" + group + "' led by another candidate", () -> !election.isLeader() && isDelivered(other));
	}

	private LeaderElectionEngine engine() {
		if (!(this.registry instanceof LeaderElectionEngine engine)) {
			throw new IllegalStateException("LeaderElectionTestSupport needs the auto-configured election engine, "
					+ "but the application's LeaderElectionRegistry is a " + this.registry.getClass().getName());
		}
		String backend = engine.store().backend();
		if (!"in-memory".equals(backend)) {
			throw new IllegalStateException("LeaderElectionTestSupport needs the in-memory backend, but the election "
					+ "runs through the " + backend + " store. Set leader-election.backend=in-memory in the test's "
					+ "properties, such as @SpringBootTest(properties = \"leader-election.backend=in-memory\").");
		}
		await("start the election (it starts when the application is ready)", engine::isRunning);
		return engine;
	}

	private void await(String description, BooleanSupplier condition) {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("Could not " + description + " within " + this.timeout);
			}
			synchronized (this.monitor) {
				try {
					this.monitor.wait(20);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while waiting to " + description, ex);
				}
			}
		}
	}

	@Override
	public void granted(Leadership leadership) {
		synchronized (this.monitor) {
			this.granted.put(leadership.group(), leadership);
			this.monitor.notifyAll();
		}
	}

	@Override
	public void leaderChanged(String group, @Nullable LeaderInfo leader) {
		synchronized (this.monitor) {
			this.leaders.put(group, Optional.ofNullable(leader));
			this.monitor.notifyAll();
		}
	}

	/**
	 * Whether the grant of this leadership, and this instance as the leader, were
	 * delivered.
	 */
	private boolean isDelivered(Leadership leadership) {
		synchronized (this.monitor) {
			return leadership.equals(this.granted.get(leadership.group()))
					&& isDelivered(new LeaderInfo(leadership.group(), leadership.candidateId(), leadership.term()));
		}
	}

	/** Whether this leader is the last one delivered for its group. */
	private boolean isDelivered(LeaderInfo leader) {
		synchronized (this.monitor) {
			return this.leaders.getOrDefault(leader.group(), Optional.empty()).filter(leader::equals).isPresent();
		}
	}

	/** The last of the listeners, so that what it has seen, all have. */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
