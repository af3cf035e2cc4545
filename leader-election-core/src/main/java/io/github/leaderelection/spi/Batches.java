package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The batch calls of any store: a {@link BatchLeaseStore}'s own, or, for a store without
 * them, its single calls one group after another within the one timeout. One by one, a
 * batch that fails or runs out of time after it answered for some groups throws a
 * {@link BatchCutShortException} with what it did for them, and one that fails on its
 * first group throws that failure: what succeeded is never thrown away, and a group it
 * did not answer for is never taken for refused or never led.
 */
public final class Batches {

	private Batches() {
	}

	/**
	 * Takes the leases of several groups; see {@link BatchLeaseStore#tryAcquireAll}.
	 * @param store the store
	 * @param groups distinct groups
	 * @param candidateId the candidate that takes them
	 * @param leaseDuration how long each lease lasts by the store's clock
	 * @param timeout how long the batch may take
	 * @return the leases taken, by group
	 */
	public static Map<String, Lease> tryAcquireAll(LeaseStore store, Collection<String> groups, String candidateId,
			Duration leaseDuration, Duration timeout) {
		if (store instanceof BatchLeaseStore batches) {
			return batches.tryAcquireAll(groups, candidateId, leaseDuration, timeout);
		}
		return tryAcquireEach(store, groups, candidateId, leaseDuration, timeout);
	}

	/**
	 * Takes the leases of several groups with the store's single calls, one group after
	 * another: for a batch store that has no request of its own for it.
	 * @param store the store
	 * @param groups distinct groups
	 * @param candidateId the candidate that takes them
	 * @param leaseDuration how long each lease lasts by the store's clock
	 * @param timeout how long the batch may take
	 * @return the leases taken, by group
	 */
	public static Map<String, Lease> tryAcquireEach(LeaseStore store, Collection<String> groups, String candidateId,
			Duration leaseDuration, Duration timeout) {
		StoreCall call = StoreCall.start("take " + groups.size() + " leases", "in the " + store.backend() + " store",
				timeout);
		Map<String, Lease> taken = new LinkedHashMap<>();
		Set<String> answered = new LinkedHashSet<>();
		for (String group : groups) {
			try {
				store.tryAcquire(group, candidateId, leaseDuration, call.remaining())
					.ifPresent((lease) -> taken.put(group, lease));
			}
			catch (RuntimeException ex) {
				throw cutShort(answered, taken, ex);
			}
			answered.add(group);
		}
		return taken;
	}

	/**
	 * Renews several leases; see {@link BatchLeaseStore#renewAll}.
	 * @param store the store
	 * @param leases leases of distinct groups
	 * @param leaseDuration how long each lease lasts from now by the store's clock
	 * @param timeout how long the batch may take
	 * @return the leases as renewed, by group; a group missing from it was refused
	 */
	public static Map<String, Lease> renewAll(LeaseStore store, Collection<Lease> leases, Duration leaseDuration,
			Duration timeout) {
		return (store instanceof BatchLeaseStore batches) ? batches.renewAll(leases, leaseDuration, timeout)
				: renewEach(store, leases, leaseDuration, timeout);
	}

	private static Map<String, Lease> renewEach(LeaseStore store, Collection<Lease> leases, Duration leaseDuration,
			Duration timeout) {
		StoreCall call = StoreCall.start("renew " + leases.size() + " leases", "in the " + store.backend() + " store",
				timeout);
		Map<String, Lease> renewed = new LinkedHashMap<>();
		Set<String> answered = new LinkedHashSet<>();
		for (Lease lease : leases) {
			try {
				store.renew(lease, leaseDuration, call.remaining())
					.ifPresent((extended) -> renewed.put(lease.group(), extended));
			}
			catch (RuntimeException ex) {
				throw cutShort(answered, renewed, ex);
			}
			answered.add(lease.group());
		}
		return renewed;
	}

	/**
	 * Reads several groups' leases; see {@link BatchLeaseStore#readAll}.
	 * @param store the store
	 * @param groups distinct groups
	 * @param timeout how long the batch may take
	 * @return the leases of the groups that have been led, by group
	 */
	public static Map<String, Lease> readAll(LeaseStore store, Collection<String> groups, Duration timeout) {
		return (store instanceof BatchLeaseStore batches) ? batches.readAll(groups, timeout)
				: readEach(store, groups, timeout);
	}

	private static Map<String, Lease> readEach(LeaseStore store, Collection<String> groups, Duration timeout) {
		StoreCall call = StoreCall.start("read " + groups.size() + " groups", "in the " + store.backend() + " store",
				timeout);
		Map<String, Lease> leases = new LinkedHashMap<>();
		Set<String> answered = new LinkedHashSet<>();
		for (String group : groups) {
			try {
				store.read(group, call.remaining()).ifPresent((lease) -> leases.put(group, lease));
			}
			catch (RuntimeException ex) {
				throw cutShort(answered, leases, ex);
			}
			answered.add(group);
		}
		return leases;
	}

	private static RuntimeException cutShort(Set<String> answered, Map<String, Lease> leases, RuntimeException ex) {
		return answered.isEmpty() ? ex : new BatchCutShortException(answered, leases, ex);
	}

}
