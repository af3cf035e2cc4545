package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import javax.sql.DataSource;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import io.github.leaderelection.spi.SeenTerms;
import io.github.leaderelection.spi.StoreCall;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.transaction;
import static io.github.leaderelection.jdbc.SqlRunner.update;

/**
 * A lease store on one table of a MySQL, MariaDB, PostgreSQL or H2 database, whose clock
 * judges every lease. The live candidates that balancing reads are kept in a second
 * table, named after the first with {@code _candidates} appended
 * ({@code leader_election_candidates} for the default table).
 *
 * <p>
 * On PostgreSQL a release, a forced leader or a cleared holder is announced with
 * {@code pg_notify} on a channel named after the table ({@code leader_election_changed}
 * for the default table), and {@link #watch} listens on it, so that followers take over
 * at once rather than at their next retry. Close the store to stop listening.
 *
 * <p>
 * The calls on many groups ({@link #tryAcquireAll}, {@link #renewAll}, {@link #readAll})
 * name any number of groups in one statement on PostgreSQL (arrays) and on MySQL 8.0.4+
 * and MariaDB 10.6+ ({@code JSON_TABLE}), and up to 500 per statement on H2 and older
 * servers, locking rows in the order of the groups' names.
 */
public class JdbcLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore, RunRecordStore {

	private static final String DEFAULT_TABLE_NAME = "leader_election";

	private static final Logger logger = LoggerFactory.getLogger(JdbcLeaseStore.class);

	private final SqlRunner runner;

	private final String tableName;

	private final StoreTables tables;

	private final String channel;

	private final @Nullable PostgresNotifications notifications;

	private final Object sqlMonitor = new Object();

	private final SeenTerms seenTerms = new SeenTerms("jdbc");

	private volatile @Nullable LeaseSql sql;

	private volatile @Nullable BatchSql batchSql;

	private volatile @Nullable RunRecordSql runSql;

	private volatile boolean runTableVerified;

	private volatile @Nullable TableSetup pendingTableSetup;

	private volatile boolean tableSetupFailureLogged;

	public JdbcLeaseStore(DataSource dataSource) {
		this(dataSource, DEFAULT_TABLE_NAME);
	}

	/**
	 * Creates a store on the given table that listens for changes on PostgreSQL.
	 * @param tableName a plain or schema-qualified name of letters, digits and
	 * underscores
	 * @throws IllegalArgumentException if the name is not one
	 */
	public JdbcLeaseStore(DataSource dataSource, String tableName) {
		this(dataSource, tableName, true);
	}

	/**
	 * Creates a store on the given table.
	 * @param tableName a plain or schema-qualified name of letters, digits and
	 * underscores
	 * @param notifications whether {@link #watch} listens for changes on PostgreSQL,
	 * holding one connection of the data source while any watch is open (changes are
	 * announced either way)
	 * @throws IllegalArgumentException if the name is not one
	 */
	public JdbcLeaseStore(DataSource dataSource, String tableName, boolean notifications) {
		this.runner = new SqlRunner(Objects.requireNonNull(dataSource, "dataSource"));
		this.tables = new StoreTables(tableName);
		this.tableName = this.tables.leases();
		this.channel = TableName.channel(this.tableName);
		this.notifications = notifications ? new PostgresNotifications(this.runner, this.channel) : null;
	}

	/**
	 * The PostgreSQL channel on which this store announces changes and listens for them.
	 */
	String channel() {
		return this.channel;
	}

	/**
	 * Checks that the store supports a database.
	 * @param productName the name that
	 * {@link java.sql.DatabaseMetaData#getDatabaseProductName()} reports
	 * @throws IllegalStateException naming the database and the supported ones if it is
	 * not one
	 */
	public static void requireSupportedDatabase(String productName) {
		SqlDialect.forProductName(Objects.requireNonNull(productName, "productName"));
	}

	/**
	 * Returns the statements that create this store's tables, the same for every
	 * supported database: the lease table's, a semicolon and a line break, and the
	 * candidates table's (which only balancing uses), without a final semicolon.
	 */
	public String ddl() {
		return this.tables.ddl();
	}

	/**
	 * Creates this store's tables unless they exist.
	 * @throws IllegalArgumentException if the database refuses the table name, such as a
	 * word it reserves
	 */
	public void createTableIfMissing() {
		try {
			this.runner.run(null, (connection) -> {
				createTableIfMissing(connection);
				return null;
			});
		}
		catch (SQLException ex) {
			throw new LeaderElectionException("Could not create table " + this.tableName + " or "
					+ this.tables.candidates() + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Checks that this store's lease table exists with the expected columns. The
	 * candidates table is not checked: only balancing needs it, and reports it missing.
	 * @throws IllegalStateException with the statements to run if it does not, or if the
	 * database is not supported
	 * @throws IllegalArgumentException if the database refuses the table name, such as a
	 * word it reserves
	 */
	public void verifyTable() {
		try {
			this.runner.run(null, (connection) -> {
				verifyTable(connection);
				return null;
			});
		}
		catch (SQLException ex) {
			throw new LeaderElectionException("Could not verify table " + this.tableName + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Makes the first operation that reaches the database create this store's tables
	 * unless they exist ({@code create}), or check that the lease table exists, before it
	 * does its work: for an application that starts while its database is down. Until
	 * that has succeeded, every operation fails, with the reason the database gave or
	 * with the statement that creates the missing table. Call it before the store is
	 * used.
	 * @param create whether to create the table if it is missing, rather than only check
	 * it
	 */
	public void prepareTableOnFirstUse(boolean create) {
		this.pendingTableSetup = create ? TableSetup.CREATE : TableSetup.VERIFY;
	}

	private void createTableIfMissing(Connection connection) throws SQLException {
		this.tables.createIfMissing(connection, sql(connection));
	}

	private void verifyTable(Connection connection) throws SQLException {
		this.tables.verify(connection, sql(connection));
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		long start = System.nanoTime();
		return execute("read the lease of", group, timeout,
				(connection, sql) -> sawLease(read(connection, sql, group, timeout), start));
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		long millis = leaseDuration.toMillis();
		return execute("acquire the lease of", group, timeout, (connection, sql) -> {
			Optional<Lease> taken = takeOver(connection, sql, group, candidateId, millis, timeout);
			if (taken.isPresent() || sawLease(read(connection, sql, group, timeout), System.nanoTime()).isPresent()) {
				return taken;
			}
			try {
				return transaction(connection, () -> {
					update(connection, sql.insert(), timeout, group, candidateId, millis);
					return Optional.of(recoverIfLost(connection, sql, readTaken(connection, sql, group, timeout),
							this.seenTerms.isLost(group, null), Duration.ZERO, millis, timeout));
				});
			}
			catch (SQLException ex) {
				if (!isDuplicateKey(ex)) {
					throw ex;
				}
			}
			// Another candidate created the row first; a forced leader's row may name us.
			return takeOver(connection, sql, group, candidateId, millis, timeout);
		});
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		if (lease.holder() == null) {
			return Optional.empty();
		}
		boolean renewed = refusedGivenUp(lease,
				execute("renew the lease of", lease.group(), timeout, (connection, sql) -> {
					if (update(connection, sql.renew(), timeout, leaseDuration.toMillis(), lease.group(),
							lease.holder(), lease.term()) > 0) {
						return true;
					}
					// Under "affected rows" semantics (MySQL's useAffectedRows=true) a
					// renewal that sets the very end the lease already has counts 0.
					// Whether the statement matched is then read back: once the row has
					// left this holder and term it never returns to them (every take-over
					// raises the term), so finding them still there means they were there
					// for the UPDATE, which then set the new end.
					return read(connection, sql, lease.group(), timeout)
						.filter((current) -> lease.holder().equals(current.holder()) && current.term() == lease.term())
						.isPresent();
				}));
		return renewed ? Optional.of(lease.renewedFor(leaseDuration)) : Optional.empty();
	}

	private boolean refusedGivenUp(Lease lease, boolean renewed) {
		if (!renewed) {
			this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term());
		}
		return renewed;
	}

	/**
	 * Takes the leases of the groups for the candidate, each as {@link #tryAcquire} takes
	 * one: a group never led gets its first term, a lease that is free, expired or
	 * already names the candidate is taken with the next term, and one that another
	 * candidate holds live is left alone. With one statement on PostgreSQL, two in one
	 * transaction on MySQL 8.0.4+ and MariaDB 10.6+, one for every
	 * {@value BatchSql#MAX_GROUPS_PER_LIST} groups on H2 and two in one transaction for
	 * every {@value BatchSql#MAX_GROUPS_PER_LIST} on older MySQL and MariaDB. The first
	 * call on MySQL 8.0.4+ and MariaDB 10.6+ that names many groups (this, a renewal or a
	 * read) also reads the types of the table's columns, once. The timeout bounds the
	 * whole call.
	 */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		Set<String> distinct = distinct(groups);
		if (distinct.isEmpty()) {
			return new LinkedHashMap<>();
		}
		long deadline = System.nanoTime() + timeout.toNanos();
		long millis = leaseDuration.toMillis();
		Set<String> seen = new LinkedHashSet<>();
		distinct.stream().filter((group) -> this.seenTerms.seen(group) > 0).forEach(seen::add);
		return execute("acquire the leases of " + distinct.size() + " groups", timeout,
				(connection, sql) -> LeaseAcquisitions.acquire(connection, batchSql(connection, sql, deadline),
						distinct, candidateId, millis, deadline, seen,
						(lease, before) -> recoverIfLost(connection, sql, lease,
								seen.contains(lease.group()) && isLost(lease.group(), before),
								seenLeaseLeft(before, candidateId), millis,
								SqlRunner.remaining(connection, deadline))));
	}

	/**
	 * Renews the leases, each only if its row still has its holder and term, as
	 * {@link #renew} does; a lease without a holder is never renewed. With one statement
	 * on PostgreSQL, MySQL 8.0.4+ and MariaDB 10.6+, and one for every
	 * {@value BatchSql#MAX_GROUPS_PER_LIST} leases on H2 and older servers. PostgreSQL
	 * and H2 return the groups they renewed. MySQL and MariaDB only count them: when the
	 * count falls short, which takes a lost lease (or, under
	 * {@code useAffectedRows=true}, a renewal that set the end the lease had), one more
	 * read tells which leases still have their holder and term. The timeout bounds the
	 * whole call.
	 */
	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		List<Lease> held = leases.stream().filter((lease) -> lease.holder() != null).toList();
		if (held.isEmpty()) {
			return new LinkedHashMap<>();
		}
		long deadline = System.nanoTime() + timeout.toNanos();
		Set<String> renewed = execute("renew the leases of " + held.size() + " groups", timeout,
				(connection, sql) -> LeaseBatches.renew(connection, batchSql(connection, sql, deadline), held,
						leaseDuration.toMillis(), deadline));
		Map<String, Lease> extended = new LinkedHashMap<>();
		for (Lease lease : held) {
			if (renewed.contains(lease.group())) {
				extended.put(lease.group(), lease.renewedFor(leaseDuration));
			}
			else {
				this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term());
			}
		}
		return extended;
	}

	/**
	 * Reads the groups with one query on PostgreSQL, MySQL 8.0.4+ and MariaDB 10.6+, and
	 * one for every {@value BatchSql#MAX_GROUPS_PER_LIST} groups on H2 and older servers.
	 * The timeout bounds the whole call.
	 */
	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		Set<String> distinct = distinct(groups);
		if (distinct.isEmpty()) {
			return new LinkedHashMap<>();
		}
		long start = System.nanoTime();
		long deadline = System.nanoTime() + timeout.toNanos();
		Map<String, Lease> leases = execute("read the leases of " + distinct.size() + " groups", timeout, (connection,
				sql) -> LeaseBatches.read(connection, batchSql(connection, sql, deadline), distinct, false, deadline));
		leases.values().forEach((lease) -> this.seenTerms.sawLease(lease, start));
		return leases;
	}

	/**
	 * Keeps the candidate's entry in the candidates table, with one statement on
	 * PostgreSQL and H2 and two on MySQL and MariaDB (see {@link LeaseSql}), and one more
	 * when entries ran out long ago, to delete them.
	 * @throws IllegalStateException with the statement that creates the candidates table
	 * if it is missing
	 */
	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		long deadline = System.nanoTime() + timeout.toNanos();
		return executeIn(this.tables.candidates(), "keep candidate '" + candidateId + "' alive", timeout,
				(connection, sql) -> LiveCandidates.keepAlive(connection, sql.candidates(), candidateId, weight,
						ttl.toMillis(), deadline));
	}

	/**
	 * Deletes the candidate's entry from the candidates table.
	 * @throws IllegalStateException with the statement that creates the candidates table
	 * if it is missing
	 */
	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		executeIn(this.tables.candidates(), "remove candidate '" + candidateId + "'", timeout, (connection, sql) -> {
			LiveCandidates.remove(connection, sql.candidates(), candidateId, timeout);
			return null;
		});
	}

	@Override
	public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
		return executeOnRuns("read the last run of job '" + job + "' of", group, timeout,
				(connection, sql) -> JdbcRunRecords.lastRun(connection, sql, group, job, timeout));
	}

	@Override
	public List<RunRecord> runs(String group, Duration timeout) {
		return executeOnRuns("read the last runs of the jobs of", group, timeout,
				(connection, sql) -> JdbcRunRecords.runs(connection, sql, group, timeout));
	}

	@Override
	public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
		return executeOnRuns("claim tick " + run.tick() + " of job '" + run.job() + "' of", lease.group(), timeout,
				(connection, sql) -> JdbcRunRecords.claimRun(connection, sql, lease, run, minInterval, timeout));
	}

	@Override
	public boolean finishRun(RunRecord ended, Duration timeout) {
		return executeOnRuns("record the end of tick " + ended.tick() + " of job '" + ended.job() + "' of",
				ended.group(), timeout, (connection, sql) -> JdbcRunRecords.finishRun(connection, sql, ended, timeout));
	}

	/**
	 * Runs work on the table of run records, checked once to exist, so that a missing one
	 * is reported with the statement that creates it.
	 */
	private <T> T executeOnRuns(String operation, String group, Duration timeout, RunWork<T> work) {
		Objects.requireNonNull(group, "group");
		return executeIn(this.tables.runs(), operation + " group '" + group + "'", timeout, (connection, sql) -> {
			RunRecordSql runSql = this.runSql;
			if (runSql == null) {
				runSql = RunRecordSql.of(sql.dialect(), this.tableName);
				this.runSql = runSql;
			}
			if (!this.runTableVerified) {
				this.tables.verifyRuns(connection, runSql);
				this.runTableVerified = true;
			}
			return work.run(connection, runSql);
		});
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		if (lease.holder() == null) {
			return;
		}
		this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term());
		execute("release the lease of", lease.group(), timeout, (connection, sql) -> announced(connection, sql,
				lease.group(), timeout, sql.release(), lease.group(), lease.holder(), lease.term()));
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		execute("force a leader for", group, timeout, (connection, sql) -> {
			if (announced(connection, sql, group, timeout, sql.force(), candidateId, group, candidateId) > 0) {
				return null;
			}
			try {
				// A lease already over: the named candidate takes the next term at once.
				announced(connection, sql, group, timeout, sql.insert(), group, candidateId, 0L);
			}
			catch (SQLException ex) {
				// The row appeared meanwhile, or exists and already names the candidate.
				if (!isDuplicateKey(ex)) {
					throw ex;
				}
				announced(connection, sql, group, timeout, sql.force(), candidateId, group, candidateId);
			}
			return null;
		});
	}

	@Override
	public void clear(String group, Duration timeout) {
		execute("clear the holder of", group, timeout,
				(connection, sql) -> announced(connection, sql, group, timeout, sql.clear(), group));
	}

	/**
	 * On PostgreSQL, unless notifications are off, calls {@code onChange} when any store
	 * on this table announces a change to the group. The first watch starts a thread that
	 * holds one connection of the data source until the last watch or the store is
	 * closed, and connects again after errors. Elsewhere, and when the connections are
	 * not pgjdbc's, this does nothing and the engine polls.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(onChange, "onChange");
		LeaseSql known = this.sql;
		if (this.notifications == null || (known != null && known.announce() == null)) {
			return () -> {
			};
		}
		return this.notifications.watch(group, onChange);
	}

	/** Stops listening for changes, returning the connection that took, if any. */
	@Override
	public void close() {
		if (this.notifications != null) {
			this.notifications.close();
		}
	}

	@Override
	public String backend() {
		return "jdbc";
	}

	/**
	 * Runs a write that may free the lease or change its holder. Where the database can
	 * push, the same statement notifies the group's watchers, so they hear of it once it
	 * is committed and only if it changed a row, and no lock outlives the statement. A
	 * take-over is not announced: the others learn that the lease is held when they next
	 * try, which is soon enough.
	 * @return the rows written
	 */
	private int announced(Connection connection, LeaseSql sql, String group, Duration timeout, String write,
			Object... parameters) throws SQLException {
		String announcing = sql.announcing(write);
		if (announcing == null) {
			return update(connection, write, timeout, parameters);
		}
		Object[] withChannel = Arrays.copyOf(parameters, parameters.length + 2);
		withChannel[parameters.length] = this.channel;
		withChannel[parameters.length + 1] = group;
		int changed = 0;
		try (PreparedStatement statement = prepare(connection, announcing, timeout, withChannel);
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				changed++;
			}
		}
		return changed;
	}

	/**
	 * Takes the existing row in one transaction and reads it back under the row lock, so
	 * that the lease returned is exactly the one written. The count is reliable under
	 * both "found rows" and "affected rows" semantics because the term always changes.
	 */
	private Optional<Lease> takeOver(Connection connection, LeaseSql sql, String group, String candidateId, long millis,
			Duration timeout) throws SQLException {
		return transaction(connection, () -> {
			// What the row held before, only where a loss could show: against a term
			// seen.
			Lease before = (this.seenTerms.seen(group) > 0) ? read(connection, sql, group, timeout).orElse(null) : null;
			boolean lost = this.seenTerms.seen(group) > 0 && isLost(group, before);
			if (update(connection, sql.acquire(), timeout, candidateId, millis, group, candidateId) == 0) {
				return Optional.empty();
			}
			return Optional.of(recoverIfLost(connection, sql, readTaken(connection, sql, group, timeout), lost,
					seenLeaseLeft(before, candidateId), millis, timeout));
		});
	}

	private static Lease readTaken(Connection connection, LeaseSql sql, String group, Duration timeout)
			throws SQLException {
		return read(connection, sql, group, timeout)
			.orElseThrow(() -> new SQLException("The row of group '" + group + "' vanished while locked"));
	}

	/**
	 * Called in the transaction that took the lease, with the lease taken: a lease taken
	 * on a record that was missing or older than a term seen ({@code lost}) gets a term
	 * above every term seen, and its holder waits one lease duration before it acts; one
	 * whose previous holder's lease was seen live for longer than the row said
	 * ({@code movedBack}) waits that out (see {@link SeenTerms}).
	 */
	private Lease recoverIfLost(Connection connection, LeaseSql sql, Lease taken, boolean lost, Duration movedBack,
			long millis, Duration timeout) throws SQLException {
		String group = taken.group();
		if (!lost && movedBack.isZero()) {
			return seen(taken);
		}
		long term = lost ? this.seenTerms.seen(group) + 1 : 0;
		long wait = Math.max(
				lost ? this.seenTerms.lostWait(group, Duration.ZERO, Duration.ofMillis(millis)).toMillis() : 0,
				movedBack.toMillis() + 1);
		update(connection, sql.recover(), timeout, term, wait, group, taken.holder(), taken.term());
		Lease recovered = seen(readTaken(connection, sql, group, timeout));
		if (lost) {
			this.seenTerms.warnLost(group, recovered.term());
		}
		else {
			this.seenTerms.warnMovedBack(group, movedBack);
		}
		return recovered;
	}

	private boolean isLost(String group, @Nullable Lease before) {
		return (before != null) ? this.seenTerms.isLost(group, before.term(), before.holder())
				: this.seenTerms.isLost(group, null);
	}

	/**
	 * How long the holder that a row named before a take may believe by what this store
	 * saw of it, when it is another candidate.
	 */
	private Duration seenLeaseLeft(@Nullable Lease before, String candidateId) {
		if (before == null || before.holder() == null || candidateId.equals(before.holder())) {
			return Duration.ZERO;
		}
		return this.seenTerms.seenLeaseLeft(before.group(), before.holder(), before.term());
	}

	private Optional<Lease> sawLease(Optional<Lease> lease, long readStartNanos) {
		lease.ifPresent((read) -> this.seenTerms.sawLease(read, readStartNanos));
		return lease;
	}

	private Optional<Lease> seen(Optional<Lease> lease) {
		lease.ifPresent(this::seen);
		return lease;
	}

	private Lease seen(Lease lease) {
		this.seenTerms.saw(lease.group(), lease.term());
		return lease;
	}

	static Optional<Lease> read(Connection connection, LeaseSql sql, String group, Duration timeout)
			throws SQLException {
		try (PreparedStatement statement = prepare(connection, sql.read(), timeout, group);
				ResultSet rows = statement.executeQuery()) {
			return rows.next() ? Optional.of(lease(group, rows)) : Optional.empty();
		}
	}

	/**
	 * The lease in the current row of a result whose first columns are those of
	 * {@link LeaseSql#read()}.
	 */
	static Lease lease(String group, ResultSet rows) throws SQLException {
		return new Lease(group, rows.getString(1), rows.getLong(2), Duration.ofMillis(rows.getLong(3)),
				Duration.ofMillis(Math.max(0, rows.getLong(4))));
	}

	private static Set<String> distinct(Collection<String> groups) {
		Set<String> distinct = new LinkedHashSet<>(groups);
		distinct.forEach((group) -> Objects.requireNonNull(group, "group"));
		return distinct;
	}

	static boolean isDuplicateKey(SQLException ex) {
		return ex.getSQLState() != null && ex.getSQLState().startsWith("23");
	}

	private <T> T execute(String operation, String group, Duration timeout, SqlWork<T> work) {
		Objects.requireNonNull(group, "group");
		return execute(operation + " group '" + group + "'", timeout, work);
	}

	private <T> T execute(String action, Duration timeout, SqlWork<T> work) {
		return executeIn(this.tableName, action, timeout, work);
	}

	private <T> T executeIn(String table, String action, Duration timeout, SqlWork<T> work) {
		StoreCall call = StoreCall.start(action, "in table " + table, timeout);
		try {
			return this.runner.run(timeout, (connection) -> work.run(connection, prepared(connection)));
		}
		catch (SQLException ex) {
			throw call.failed(ex);
		}
	}

	/** The SQL for the database, once the table is set up if that was asked for. */
	private LeaseSql prepared(Connection connection) throws SQLException {
		TableSetup setup = this.pendingTableSetup;
		if (setup == null) {
			return sql(connection);
		}
		try {
			LeaseSql sql = sql(connection);
			// Concurrent first operations may both do this: creating and checking are
			// idempotent.
			if (setup == TableSetup.CREATE) {
				createTableIfMissing(connection);
			}
			else {
				verifyTable(connection);
			}
			this.pendingTableSetup = null;
			return sql;
		}
		catch (SQLException | RuntimeException ex) {
			// The engine warns of the first failure in a row only, which was likely the
			// database being down: that it now answers but the table is not there
			// deserves a warning too.
			if (!this.tableSetupFailureLogged) {
				this.tableSetupFailureLogged = true;
				if (setup == TableSetup.CREATE) {
					logger.warn("The database answers, but the leader election table {} could not be created, and the "
							+ "election fails until it exists ({}). Make sure the database user may create it, or "
							+ "create it with:\n{};", this.tableName, ex.getMessage(), ddl());
				}
				else {
					logger.warn("The database answers, but the election fails until the leader election table {} is "
							+ "usable: {}", this.tableName, ex.getMessage());
				}
			}
			throw ex;
		}
	}

	/**
	 * The statements on many groups, chosen at the first call that needs them (see
	 * {@link BatchSqlChooser}): on MySQL and MariaDB this reads the table's column types,
	 * so the table must exist by then.
	 */
	private BatchSql batchSql(Connection connection, LeaseSql sql, long deadline) throws SQLException {
		BatchSql batchSql = this.batchSql;
		if (batchSql == null) {
			BatchSql chosen = BatchSqlChooser.choose(connection, sql.dialect(), this.tableName,
					SqlRunner.remaining(connection, deadline));
			if (chosen == null) {
				return BatchSql.lists(sql.dialect(), this.tableName);
			}
			// Concurrent first calls may both choose: they choose the same.
			this.batchSql = chosen;
			batchSql = chosen;
		}
		return batchSql;
	}

	private LeaseSql sql(Connection connection) throws SQLException {
		LeaseSql sql = this.sql;
		if (sql == null) {
			// Once per store: the product name, which drivers answer from the
			// connection's handshake.
			synchronized (this.sqlMonitor) {
				sql = this.sql;
				if (sql == null) {
					SqlDialect dialect = SqlDialect.forProductName(connection.getMetaData().getDatabaseProductName());
					sql = LeaseSql.of(dialect, this.tableName);
					this.sql = sql;
				}
			}
		}
		return sql;
	}

	private enum TableSetup {

		CREATE, VERIFY

	}

	@FunctionalInterface
	private interface SqlWork<T> {

		T run(Connection connection, LeaseSql sql) throws SQLException;

	}

	@FunctionalInterface
	private interface RunWork<T> {

		T run(Connection connection, RunRecordSql sql) throws SQLException;

	}

}
