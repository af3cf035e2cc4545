package io.github.leaderelection.autoconfigure;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link InMemoryDatabases}.
 */
class InMemoryDatabasesTests {

	@ParameterizedTest
	@ValueSource(strings = { "jdbc:h2:mem:", "jdbc:h2:mem:orders;DB_CLOSE_DELAY=-1", "JDBC:H2:MEM:orders",
			"jdbc:hsqldb:mem:orders", "jdbc:derby:memory:orders;create=true", "jdbc:p6spy:h2:mem:orders" })
	void recognizesInMemoryDatabases(String url) {
		assertThat(InMemoryDatabases.isInMemoryUrl(url)).isTrue();
	}

	@ParameterizedTest
	@NullSource
	@ValueSource(strings = { "jdbc:h2:file:/var/lib/app/leases;AUTO_SERVER=TRUE", "jdbc:h2:~/leases",
			"jdbc:h2:tcp://db.internal/mem:leases", "jdbc:hsqldb:hsql://db.internal/mem", "jdbc:hsqldb:file:leases",
			"jdbc:derby://db.internal:1527/memory:leases", "jdbc:derby:leases", "jdbc:postgresql://mem:5432/h2:mem:",
			"jdbc:mariadb://127.0.0.1:3306/test", "h2:mem:leases" })
	void takesOtherDatabasesForShared(String url) {
		assertThat(InMemoryDatabases.isInMemoryUrl(url)).isFalse();
	}

}
