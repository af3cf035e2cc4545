package io.github.leaderelection.benchmarks;

import java.util.Locale;

/**
 * A system under test on one store, such as {@code ours-mariadb} or {@code si-redis}.
 */
record Contender(Kind kind, Store store) {

	enum Kind {

		OURS("ours", "this starter"), SPRING_INTEGRATION("si", "Spring Integration 7.0.5"),
		SEED_SQL("seed", "seed 001 SQL");

		final String id;

		final String label;

		Kind(String id, String label) {
			this.id = id;
			this.label = label;
		}

	}

	static Contender parse(String value) {
		String[] parts = value.split("-", 2);
		for (Kind kind : Kind.values()) {
			if (kind.id.equals(parts[0])) {
				return new Contender(kind, Store.parse(parts[1]));
			}
		}
		throw new IllegalArgumentException("Unknown contender " + value);
	}

	String id() {
		return this.kind.id + "-" + this.store.id();
	}

	String label() {
		String how = switch (this.kind) {
			case OURS -> "this starter";
			case SPRING_INTEGRATION -> (this.store == Store.ZOOKEEPER) ? "SI LeaderInitiator"
					: (this.store == Store.REDIS) ? "SI RedisLockRegistry" : "SI JdbcLockRegistry";
			case SEED_SQL -> "seed 001 SQL";
		};
		return how + " / " + this.store.label;
	}

	@Override
	public String toString() {
		return id().toLowerCase(Locale.ROOT);
	}

}
