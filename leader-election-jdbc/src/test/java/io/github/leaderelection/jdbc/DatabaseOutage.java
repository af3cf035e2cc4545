package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A database that refuses connections, as a closed port does, until its outage ends.
 */
final class DatabaseOutage extends DelegatingDataSource {

	private final AtomicInteger refused = new AtomicInteger();

	private volatile boolean down = true;

	DatabaseOutage(DataSource dataSource) {
		super(dataSource);
	}

	void end() {
		this.down = false;
	}

	/** How many connections were refused so far. */
	int refused() {
		return this.refused.get();
	}

	@Override
	public Connection getConnection() throws SQLException {
		if (this.down) {
			this.refused.incrementAndGet();
			throw new SQLNonTransientConnectionException("Connection refused", "08001");
		}
		return super.getConnection();
	}

}
