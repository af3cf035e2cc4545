package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.spi.WatcherRegistry;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watches of a {@link JdbcLeaseStore} on PostgreSQL: one thread that listens on the
 * store's channel on one connection, from the first watch until the last one or the store
 * is closed, and connects again after any error. The election never depends on it: a
 * notification only makes the engine try before its next poll.
 *
 * <p>
 * pgjdbc is optional: only the methods of this class name its types, and they run only
 * after {@link #DRIVER_PRESENT} said it is there.
 */
final class PostgresNotifications implements AutoCloseable {

	static final String THREAD_NAME = "leader-election-pg-listen";

	private static final boolean DRIVER_PRESENT = isPresent("org.postgresql.PGConnection");

	/**
	 * How long one wait for notifications lasts, and so how soon the thread notices a
	 * stop.
	 */
	private static final int WAIT_MILLIS = 500;

	/**
	 * A dead peer may never say so: after this long without news the connection must
	 * prove alive.
	 */
	private static final long PROBE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** Bounds every socket read other than the waits, such as that proof. */
	private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(2);

	private static final Logger logger = LoggerFactory.getLogger(PostgresNotifications.class);

	private final SqlRunner runner;

	private final String channel;

	/**
	 * LISTEN takes an identifier; the channel is made of a validated table name, so
	 * quoting suffices.
	 */
	private final String listen;

	/**
	 * Added and closed under the monitor, so that the last one closed stops the listener.
	 */
	private final WatcherRegistry watchers = new WatcherRegistry();

	private final Object monitor = new Object();

	/**
	 * The thread that is to listen now; any other listener thread ends. Guarded by the
	 * monitor.
	 */
	private @Nullable Thread listener;

	/**
	 * The listener threads that have not ended yet, the current one included. Guarded by
	 * the monitor.
	 */
	private final Set<Thread> running = new HashSet<>();

	/**
	 * Whether the store is closed or its connections cannot listen. Guarded by the
	 * monitor.
	 */
	private boolean closed;

	PostgresNotifications(SqlRunner runner, String channel) {
		this.runner = runner;
		this.channel = channel;
		this.listen = "LISTEN \"" + channel + "\"";
	}

	/**
	 * Calls {@code onChange}, which must not block, whenever a change to the group is
	 * announced.
	 */
	AutoCloseable watch(String group, Runnable onChange) {
		synchronized (this.monitor) {
			if (this.closed) {
				return () -> {
				};
			}
			AutoCloseable watch = this.watchers.add(group, onChange, this::stopListener);
			if (this.listener == null) {
				Thread thread = new Thread(new Listener(), THREAD_NAME);
				thread.setDaemon(true);
				this.listener = thread;
				this.running.add(thread);
				thread.start();
			}
			return () -> {
				synchronized (this.monitor) {
					watch.close();
				}
			};
		}
	}

	/**
	 * Stops listening for good and waits a little for the connections to go back to the
	 * pool, which is about to close too. Threads stopped by the last watch may still be
	 * ending.
	 */
	@Override
	public void close() {
		List<Thread> stopping;
		synchronized (this.monitor) {
			this.closed = true;
			stopListener();
			stopping = List.copyOf(this.running);
		}
		long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
		try {
			for (Thread thread : stopping) {
				TimeUnit.NANOSECONDS.timedJoin(thread, Math.max(1, deadline - System.nanoTime()));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Tells the current listener thread to end; the caller holds the monitor. */
	private void stopListener() {
		this.listener = null;
		this.monitor.notifyAll();
	}

	private boolean isCurrentListener() {
		synchronized (this.monitor) {
			return this.listener == Thread.currentThread();
		}
	}

	private void giveUp() {
		synchronized (this.monitor) {
			this.closed = true;
			if (this.listener == Thread.currentThread()) {
				this.listener = null;
			}
		}
	}

	private static boolean isPresent(String className) {
		try {
			Class.forName(className, false, PostgresNotifications.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	/** The loop of one listener thread; its fields belong to that thread. */
	private final class Listener implements Runnable {

		private boolean failing;

		/**
		 * Whether this thread ever had a connection, and so knows the database is there.
		 */
		private boolean connected;

		private Duration backoff = FIRST_BACKOFF;

		@Override
		public void run() {
			try {
				while (isCurrentListener()) {
					try {
						if (!PostgresNotifications.this.runner.run(READ_TIMEOUT, this::listen)) {
							giveUp();
							return;
						}
					}
					catch (SQLException | RuntimeException ex) {
						if (isCurrentListener()) {
							failed(ex);
						}
					}
				}
			}
			finally {
				synchronized (PostgresNotifications.this.monitor) {
					PostgresNotifications.this.running.remove(Thread.currentThread());
				}
			}
		}

		/**
		 * Listens on the connection until this thread is to stop.
		 * @return {@code false} if the connection cannot listen, so that trying again is
		 * useless
		 */
		private boolean listen(Connection connection) throws SQLException {
			this.connected = true;
			PGConnection pgConnection = pgjdbc(connection);
			if (pgConnection == null) {
				return false;
			}
			try (Statement statement = connection.createStatement()) {
				try {
					statement.execute(PostgresNotifications.this.listen);
					listening();
					long quietSince = System.nanoTime();
					while (isCurrentListener()) {
						PGNotification[] received = pgConnection.getNotifications(WAIT_MILLIS);
						if (received != null && received.length > 0) {
							deliver(received);
							quietSince = System.nanoTime();
						}
						else if (System.nanoTime() - quietSince > PROBE_AFTER_NANOS) {
							// A no-op for the server, but a round trip that a dead
							// connection fails.
							statement.execute(PostgresNotifications.this.listen);
							quietSince = System.nanoTime();
						}
					}
				}
				finally {
					unlisten(statement);
				}
			}
			return true;
		}

		private @Nullable PGConnection pgjdbc(Connection connection) throws SQLException {
			String product = connection.getMetaData().getDatabaseProductName();
			if (SqlDialect.forProductName(product).announce() == null) {
				logger.debug("No lease change notifications on {}: elections poll", product);
				return null;
			}
			if (DRIVER_PRESENT && connection.isWrapperFor(PGConnection.class)) {
				return connection.unwrap(PGConnection.class);
			}
			logger.info("Cannot listen for lease changes on PostgreSQL: the data source's connections ({}) are not "
					+ "pgjdbc's (org.postgresql.PGConnection). Followers take over a released lease at their next "
					+ "retry instead of at once", connection.getClass().getName());
			return null;
		}

		private void listening() {
			if (this.failing) {
				logger.info("Listening for lease changes on PostgreSQL channel '{}' again",
						PostgresNotifications.this.channel);
			}
			this.failing = false;
			this.backoff = FIRST_BACKOFF;
			// Changes made while nobody listened (before the first LISTEN, or during an
			// outage) were announced to nobody: every watcher looks once.
			PostgresNotifications.this.watchers.notifyEveryGroup();
		}

		private void deliver(PGNotification[] received) {
			for (PGNotification notification : received) {
				if (PostgresNotifications.this.channel.equals(notification.getName())) {
					PostgresNotifications.this.watchers.notifyGroup(notification.getParameter());
				}
			}
		}

		/** A pooled connection must not go on listening for its next user. */
		private void unlisten(Statement statement) {
			try {
				statement.execute("UNLISTEN *");
			}
			catch (SQLException ex) {
				// The connection is broken, and the pool discards it.
				logger.debug("Could not stop listening on channel '{}'", PostgresNotifications.this.channel, ex);
			}
		}

		private void failed(Exception ex) {
			if (!this.connected) {
				// A database that has not answered since startup, which may not even be
				// PostgreSQL:
				// the election itself says that it cannot reach the store.
				logger.debug("Could not connect to listen on channel '{}' yet", PostgresNotifications.this.channel, ex);
			}
			else if (!this.failing) {
				this.failing = true;
				logger.warn("Could not listen for lease changes on PostgreSQL channel '{}'; followers poll until it "
						+ "works again (retrying): {}", PostgresNotifications.this.channel, ex.toString());
				logger.debug("Listen failure detail", ex);
			}
			else {
				logger.debug("Could not listen on channel '{}' again", PostgresNotifications.this.channel, ex);
			}
			pause(this.backoff);
			this.backoff = (this.backoff.compareTo(MAX_BACKOFF.dividedBy(2)) < 0) ? this.backoff.multipliedBy(2)
					: MAX_BACKOFF;
		}

		/** Waits before connecting again, or less if this thread is to stop. */
		private void pause(Duration duration) {
			long deadline = System.nanoTime() + duration.toNanos();
			synchronized (PostgresNotifications.this.monitor) {
				long remaining;
				while (PostgresNotifications.this.listener == Thread.currentThread()
						&& (remaining = deadline - System.nanoTime()) > 0) {
					try {
						TimeUnit.NANOSECONDS.timedWait(PostgresNotifications.this.monitor, remaining);
					}
					catch (InterruptedException ex) {
						// Nobody here interrupts this thread: whoever did wants it to
						// end.
						Thread.currentThread().interrupt();
						stopListener();
						return;
					}
				}
			}
		}

	}

}
