package io.github.leaderelection.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code lose-store-data} fault: the election's own data in the store is lost or
 * changed by hand while the nodes run, in one of four ways drawn from the run's random
 * (see {@link Variant}). The store survives it if a grant on a record that is missing or
 * older than what its candidate saw waits one lease duration, and takes a term above
 * every term it saw.
 *
 * <p>
 * For the restore, the harness copies the election's data before every other fault (after
 * the run settled, while the store answers): the copy written back is the one taken
 * before the previous fault, so the terms that fault advanced go back with it. With no
 * earlier copy, it copies at the fault's start and waits a few seconds first. It writes
 * the copy back only once every candidate has read the latest grant of every group (the
 * run's {@code settled} check): a candidate that has not read it when the copy lacks it
 * cannot tell the copy from the truth, and may lead beside that grant's holder until its
 * next renewal, the limit the README states.
 */
final class LostStoreData implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LostStoreData.class);

	/** The ways the data is lost. */
	enum Variant {

		/**
		 * One group's record deleted (and, on a coin flip, the live lease where the store
		 * keeps it apart), as an operator forcing a re-election by hand.
		 */
		DELETE_RECORD("delete-record"),

		/**
		 * All the election's data deleted ({@code DELETE FROM} or {@code TRUNCATE},
		 * {@code FLUSHALL} or deleting the keys, the nodes or the prefix).
		 */
		WIPE("wipe"),

		/** An earlier copy of the election's data written back over it. */
		RESTORE("restore"),

		/** One group's term lowered by 1 to 3. */
		LOWER_TERM("lower-term");

		private final String id;

		Variant(String id) {
			this.id = id;
		}

		/** The name the variant has on the command line and in the fault's detail. */
		String id() {
			return this.id;
		}

		/**
		 * The variants named in a comma-separated list, every one for an empty list.
		 * @throws IllegalArgumentException for a name that is not a variant's
		 */
		static List<Variant> parse(String names) {
			if (names.isBlank()) {
				return List.of(values());
			}
			List<Variant> variants = new ArrayList<>();
			for (String name : names.split(",")) {
				variants.add(Arrays.stream(values())
					.filter((variant) -> variant.id.equals(name.trim()))
					.findFirst()
					.orElseThrow(() -> new IllegalArgumentException("Unknown lost-data variant '" + name.trim()
							+ "'; known: " + Arrays.stream(values()).map((variant) -> variant.id).toList())));
			}
			return List.copyOf(variants);
		}

	}

	/** What the fault did, between two instants of {@link EventLog#now()}. */
	record Outcome(long start, long end, String detail) {
	}

	private final StoreData data;

	private final Random random;

	private final List<Variant> variants;

	private StoreData.Copy copy;

	private long copiedAt;

	/**
	 * @param variants the ways the data may be lost, drawn in turn by the run's random
	 */
	LostStoreData(StoreData data, Random random, List<Variant> variants) {
		this.data = data;
		this.random = random;
		this.variants = List.copyOf(variants);
	}

	/**
	 * Copies the election's data for a later restore; keeps the copy before if the store
	 * does not answer.
	 */
	void copy() {
		try {
			this.data.connect();
			StoreData.Copy taken = this.data.copy();
			this.copy = taken;
			this.copiedAt = EventLog.now();
		}
		catch (Exception ex) {
			logger.warn("Could not copy the election's data; keeping the copy before", ex);
		}
	}

	/**
	 * Loses or changes the data of one of the groups, or of all of them. The fault's
	 * start is the instant the change begins: a restore's copy was taken earlier, but
	 * nothing changed until it was written back.
	 */
	Outcome inject(List<String> groups, BooleanSupplier settled) throws Exception {
		Variant variant = this.variants.get(this.random.nextInt(this.variants.size()));
		// Drawn whatever the variant, so that one seed makes the same later choices.
		String group = groups.get(this.random.nextInt(groups.size()));
		boolean flip = this.random.nextBoolean();
		long by = 1 + this.random.nextInt(3);
		long wait = 1000 + this.random.nextInt(2000);
		if (variant == Variant.RESTORE && this.copy == null) {
			copy();
			if (this.copy == null) {
				throw new IllegalStateException("No copy of the election's data to restore");
			}
			sleep(wait);
		}
		if (variant == Variant.RESTORE && !settled.getAsBoolean()) {
			throw new NotSettledException();
		}
		this.data.connect();
		long start = EventLog.now();
		String detail = switch (variant) {
			case DELETE_RECORD -> this.data.deleteGroup(group, flip);
			case WIPE -> this.data.wipe(flip);
			case RESTORE ->
				this.data.restore(this.copy) + "-copied-" + (start - this.copiedAt) / 1_000_000 + "ms-before";
			case LOWER_TERM -> this.data.lowerTerm(group, by);
		};
		return new Outcome(start, EventLog.now(), variant.id + ":" + detail);
	}

	@Override
	public void close() throws Exception {
		this.data.close();
	}

	/** A restore not written: the candidates went on taking leases. */
	static final class NotSettledException extends Exception {

		NotSettledException() {
			super("No moment in which every candidate had read the latest grants");
		}

	}

	private static void sleep(long millis) throws InterruptedException {
		Thread.sleep(millis);
	}

}
