package io.github.leaderelection.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source whose caller freezes, once armed, right after the next statement it runs
 * returns, until {@link #thaw}: a process stopped or paused between two statements of a
 * call, as the database sees it.
 */
final class FreezingDataSource extends DelegatingDataSource {

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
	public Connection getConnection() throws SQLException {
		return freezing(Connection.class, super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return freezing(Connection.class, super.getConnection(username, password));
	}

	private <T> T freezing(Class<T> type, T target) {
		InvocationHandler handler = (proxy, method, arguments) -> {
			Object result = invoke(target, method, arguments);
			if (target instanceof Statement && method.getName().startsWith("execute")
					&& this.armed.compareAndSet(true, false)) {
				this.frozen.countDown();
				this.thawed.await();
			}
			if (result instanceof Statement statement && Statement.class.isAssignableFrom(method.getReturnType())) {
				return freezing(statementType(method), statement);
			}
			return result;
		};
		return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type }, handler));
	}

	@SuppressWarnings("unchecked")
	private static Class<Statement> statementType(Method method) {
		return (Class<Statement>) method.getReturnType();
	}

	private static Object invoke(Object target, Method method, Object[] arguments) throws Throwable {
		try {
			return method.invoke(target, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
