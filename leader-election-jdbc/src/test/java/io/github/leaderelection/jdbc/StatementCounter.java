package io.github.leaderelection.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source that counts the statements executed on its connections, each round trip
 * of a statement to the database once (a statement added to a batch counts as one).
 */
final class StatementCounter extends DelegatingDataSource {

	private final AtomicInteger executed = new AtomicInteger();

	StatementCounter(DataSource dataSource) {
		super(dataSource);
	}

	/** Returns how many statements were executed since the last call, and starts over. */
	int takeCount() {
		return this.executed.getAndSet(0);
	}

	@Override
	public Connection getConnection() throws SQLException {
		return counting(Connection.class, super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return counting(Connection.class, super.getConnection(username, password));
	}

	private <T> T counting(Class<T> type, T target) {
		InvocationHandler handler = (proxy, method, arguments) -> {
			Object result = invoke(target, method, arguments);
			String name = method.getName();
			if (target instanceof Statement
					&& ((name.startsWith("execute") && !name.endsWith("Batch")) || name.equals("addBatch"))) {
				this.executed.incrementAndGet();
			}
			if (result instanceof Statement statement && Statement.class.isAssignableFrom(method.getReturnType())) {
				return counting(statementType(method), statement);
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
