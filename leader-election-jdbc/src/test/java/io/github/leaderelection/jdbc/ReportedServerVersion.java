package io.github.leaderelection.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source whose connections report another server version than the server's own, so
 * that a real server runs the statements that the store chooses for an older one.
 */
final class ReportedServerVersion extends DelegatingDataSource {

	private final String version;

	/**
	 * @param version what {@link DatabaseMetaData#getDatabaseProductVersion()} reports
	 */
	ReportedServerVersion(DataSource dataSource, String version) {
		super(dataSource);
		this.version = version;
	}

	@Override
	public Connection getConnection() throws SQLException {
		return reporting(super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return reporting(super.getConnection(username, password));
	}

	private Connection reporting(Connection connection) {
		return proxy(Connection.class, connection, (method) -> method.getName().equals("getMetaData")
				? proxy(DatabaseMetaData.class, connection.getMetaData(), this::metaData) : null);
	}

	private Object metaData(Method method) {
		return method.getName().equals("getDatabaseProductVersion") ? this.version : null;
	}

	/**
	 * Returns a proxy that answers a method with what {@code answer} gives, or when that
	 * is {@code null}, with what the target answers.
	 */
	private static <T> T proxy(Class<T> type, T target, Answer answer) {
		return type.cast(Proxy.newProxyInstance(ReportedServerVersion.class.getClassLoader(), new Class<?>[] { type },
				(proxy, method, arguments) -> {
					Object answered = answer.answer(method);
					if (answered != null) {
						return answered;
					}
					try {
						return method.invoke(target, arguments);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				}));
	}

	@FunctionalInterface
	private interface Answer {

		Object answer(Method method) throws SQLException;

	}

}
