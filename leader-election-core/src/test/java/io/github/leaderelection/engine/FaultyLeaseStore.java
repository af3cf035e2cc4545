package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

/**
 * Wraps a store so that a test can make its calls fail or hang, as a store outage or a
 * cut connection would, for one candidate only.
 */
class FaultyLeaseStore extends ForwardingLeaseStore {

	enum Mode {

		NORMAL, FAIL, HANG, REFUSE_RENEWALS

	}

	private volatile Mode mode = Mode.NORMAL;

	private volatile CountDownLatch hang = new CountDownLatch(0);

	private volatile @Nullable VirtualHang virtualHang;

	private final AtomicInteger hangingCalls = new AtomicInteger();

	private final boolean push;

	final AtomicInteger calls = new AtomicInteger();

	FaultyLeaseStore(LeaseStore delegate) {
		this(delegate, true);
	}

	/**
	 * Wraps a store; without push, changes reach candidates only at their next attempt,
	 * as with a polling store such as a database table.
	 */
	FaultyLeaseStore(LeaseStore delegate, boolean push) {
		super(delegate);
		this.push = push;
	}

	void fail() {
		this.mode = Mode.FAIL;
	}

	/**
	 * Renewals answer {@code false} while the lease still names its holder, as a
	 * suspended session does.
	 */
	void refuseRenewals() {
		this.mode = Mode.REFUSE_RENEWALS;
	}

	void hang() {
		this.hang = new CountDownLatch(1);
		this.mode = Mode.HANG;
	}

	/**
	 * On virtual time: every call hangs until {@code over} holds, moving the clock from
	 * within, a step at a time, so that what falls due meanwhile runs as it would on the
	 * engine's other threads (a deadline check, another candidate's rounds); then the
	 * calls go on to the store and the store is back to normal. A call made while another
	 * hangs hangs too, nested in it. {@code over} is checked at every step: a test checks
	 * there what must hold throughout.
	 */
	void hangUntil(VirtualElectionScheduler time, BooleanSupplier over) {
		this.virtualHang = new VirtualHang(time, over);
		this.mode = Mode.HANG;
	}

	/** Whether the calls hang, and on virtual time, whether one is hanging now. */
	boolean isHanging() {
		return this.mode == Mode.HANG && (this.virtualHang == null || this.hangingCalls.get() > 0);
	}

	/** Back to normal; hung calls go on to the store. */
	void heal() {
		this.mode = Mode.NORMAL;
		this.virtualHang = null;
		this.hang.countDown();
	}

	private void before() {
		this.calls.incrementAndGet();
		switch (this.mode) {
			case FAIL -> throw new IllegalStateException("store unavailable (injected)");
			case HANG -> {
				VirtualHang virtual = this.virtualHang;
				if (virtual != null) {
					hangOn(virtual);
					return;
				}
				try {
					this.hang.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("interrupted while hung", ex);
				}
			}
			case NORMAL, REFUSE_RENEWALS -> {
			}
		}
	}

	private void hangOn(VirtualHang virtual) {
		this.hangingCalls.incrementAndGet();
		try {
			virtual.time().advanceUntil(virtual.over(), VirtualHang.STEP, VirtualHang.AT_MOST);
		}
		finally {
			this.hangingCalls.decrementAndGet();
		}
		if (this.virtualHang == virtual) {
			heal();
		}
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		before();
		return delegate().read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		before();
		return delegate().tryAcquire(group, candidateId, leaseDuration, timeout);
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		before();
		return (this.mode != Mode.REFUSE_RENEWALS) ? delegate().renew(lease, leaseDuration, timeout) : Optional.empty();
	}

	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		before();
		return super.tryAcquireAll(groups, candidateId, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		before();
		return (this.mode != Mode.REFUSE_RENEWALS) ? super.renewAll(leases, leaseDuration, timeout) : Map.of();
	}

	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		before();
		return super.readAll(groups, timeout);
	}

	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		before();
		return super.keepCandidateAlive(candidateId, weight, ttl, timeout);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		before();
		delegate().release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		before();
		super.forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		before();
		super.clear(group, timeout);
	}

	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.push ? super.watch(group, onChange) : () -> {
		};
	}

	@Override
	public String backend() {
		return "faulty-" + delegate().backend();
	}

	private record VirtualHang(VirtualElectionScheduler time, BooleanSupplier over) {

		static final Duration STEP = Duration.ofMillis(10);

		static final Duration AT_MOST = Duration.ofSeconds(60);

	}

}
