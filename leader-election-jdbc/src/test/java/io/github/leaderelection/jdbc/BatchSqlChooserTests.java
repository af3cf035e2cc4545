package io.github.leaderelection.jdbc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BatchSqlChooser}: which server versions have {@code JSON_TABLE}, as
 * the drivers report them.
 */
class BatchSqlChooserTests {

	@Test
	void findsJsonTableFromMariaDb106() {
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "10.11.19-MariaDB-0+deb12u1")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "10.6.0-MariaDB")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "11.4.2-MariaDB")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "10.5.27-MariaDB")).isFalse();
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "10.3.39-MariaDB-log")).isFalse();
	}

	@Test
	void findsJsonTableFromMariaDb106ThroughMySqlsDriver() {
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "5.5.5-10.11.6-MariaDB-0+deb12u1")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "5.5.5-10.5.8-MariaDB")).isFalse();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "11.4.2-MariaDB")).isTrue();
	}

	@Test
	void findsJsonTableFromMySql804() {
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "8.0.4")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "8.0.36")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "8.4.3")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "9.1.0-commercial")).isTrue();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "8.0.3-rc-log")).isFalse();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "5.7.44-log")).isFalse();
	}

	@Test
	void takesAVersionItCannotReadForOneWithoutJsonTable() {
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "")).isFalse();
		assertThat(BatchSqlChooser.hasJsonTable("MySQL", "unknown")).isFalse();
		assertThat(BatchSqlChooser.hasJsonTable("MariaDB", "10.11")).isFalse();
	}

}
