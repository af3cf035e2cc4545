package io.github.leaderelection.jdbc;

import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

/**
 * A data source that counts the statements executed on its connections, each round trip
 * of a statement to the database once (a statement added to a batch counts as one).
 */
final class StatementCounter extends StatementCallsDataSource {

	private final AtomicInteger executed = new AtomicInteger();

	StatementCounter(DataSource dataSource) {
		super(dataSource);
	}

	/** Returns how many statements were executed since the last call, and starts over. */
	int takeCount() {
		return this.executed.getAndSet(0);
	}

	@Override
	void called(String method) {
		if ((method.startsWith("execute") && !method.endsWith("Batch")) || method.equals("addBatch")) {
			this.executed.incrementAndGet();
		}
	}

}
