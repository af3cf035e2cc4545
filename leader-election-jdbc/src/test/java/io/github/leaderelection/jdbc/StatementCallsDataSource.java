package io.github.leaderelection.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source whose connections tell {@link #called} of every call on the statements
 * they make, once the call returned: the base of the test data sources that watch what a
 * store sends.
 */
abstract class StatementCallsDataSource extends DelegatingDataSource {

	StatementCallsDataSource(DataSource dataSource) {
		super(dataSource);
	}

	/**
	 * A call on a statement returned, on the caller's thread.
	 * @param method the name of the statement's method, such as {@code executeQuery}
	 */
	abstract void called(String method) throws Exception;

	@Override
	public Connection getConnection() throws SQLException {
		return watching(Connection.class, super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return watching(Connection.class, super.getConnection(username, password));
	}

	private <T> T watching(Class<T> type, T target) {
		InvocationHandler handler = (proxy, method, arguments) -> {
			Object result = invoke(target, method, arguments);
			if (target instanceof Statement) {
				called(method.getName());
			}
			if (result instanceof Statement statement && Statement.class.isAssignableFrom(method.getReturnType())) {
				return watching(statementType(method), statement);
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
