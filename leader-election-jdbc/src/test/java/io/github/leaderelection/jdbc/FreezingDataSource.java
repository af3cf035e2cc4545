package io.github.leaderelection.jdbc;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

/**
 * A data source whose caller freezes, once armed, right after the next statement it runs
 * returns, until {@link #thaw}: a process stopped or paused between two statements of a
 * call, as the database sees it.
 */
final class FreezingDataSource extends StatementCallsDataSource {

	private final AtomicBoolean armed = new AtomicBoolean();

	private final CountDownLatch frozen = new CountDownLatch(1);

	private final CountDownLatch thawed = new CountDownLatch(1);

	FreezingDataSource(DataSource dataSource) {
		super(dataSource);
	}

	/** Freezes the caller of the next statement once it returns. */
	void freezeAfterNextStatement() {
		this.armed.set(true);
	}

	/** Waits until a caller froze. */
	boolean awaitFrozen(long seconds) throws InterruptedException {
		return this.frozen.await(seconds, TimeUnit.SECONDS);
	}

	void thaw() {
		this.thawed.countDown();
	}

	@Override
	void called(String method) throws InterruptedException {
		if (method.startsWith("execute") && this.armed.compareAndSet(true, false)) {
			this.frozen.countDown();
			this.thawed.await();
		}
	}

}
