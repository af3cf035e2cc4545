package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.leaderelection.LeaderElectionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link StoreOutages}: an outage of the store is said once, not once per
 * group.
 */
class StoreOutagesTests {

	private final StoreOutages outages = new StoreOutages("jdbc", Duration.ofSeconds(2));

	private final Logger logger = (Logger) LoggerFactory.getLogger(StoreHealth.class);

	private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

	@BeforeEach
	void listen() {
		this.logged.start();
		this.logger.addAppender(this.logged);
	}

	@AfterEach
	void stopListening() {
		this.logger.detachAppender(this.logged);
	}

	@Test
	void groupsThatFailAlikeSayItOnceAtWarnAndTheLastRecoverySaysHowManyFailed() {
		LeaderElectionException down = new LeaderElectionException("Connection refused");
		for (int i = 0; i < 100; i++) {
			this.outages.failed("group-" + i, down);
		}
		for (int i = 0; i < 100; i++) {
			this.outages.recovered("group-" + i, 3);
		}
		assertThat(linesAt(Level.WARN)).containsExactly("Election of group 'group-0' failed on the jdbc store "
				+ "(retrying every PT2S): io.github.leaderelection.LeaderElectionException: Connection refused");
		assertThat(linesAt(Level.INFO)).containsExactly(
				"Election of group 'group-99' reached the jdbc store again after 3 failed attempts, the last of 100 "
						+ "groups that failed");
	}

	@Test
	void aGroupThatFailsTwiceInOneOutageCountsOnce() {
		LeaderElectionException down = new LeaderElectionException("Connection refused");
		this.outages.failed("orders", down);
		this.outages.failed("billing", down);
		this.outages.recovered("orders", 1);
		this.outages.failed("orders", down);
		this.outages.recovered("orders", 1);
		this.outages.recovered("billing", 2);
		assertThat(linesAt(Level.INFO)).containsExactly(
				"Election of group 'billing' reached the jdbc store again after 2 failed attempts, the last of 2 "
						+ "groups that failed");
	}

	@Test
	void aGroupThatFailsOtherwiseSaysItAtWarnToo() {
		this.outages.failed("orders", new LeaderElectionException("Connection refused"));
		this.outages.failed("billing", new LeaderElectionException("Connection refused"));
		this.outages.failed("reports", new LeaderElectionException("Lock wait timeout exceeded"));
		assertThat(linesAt(Level.WARN)).hasSize(2)
			.anySatisfy((line) -> assertThat(line).contains("'orders'"))
			.anySatisfy((line) -> assertThat(line).contains("'reports'", "Lock wait timeout exceeded"));
	}

	@Test
	void groupsOfABatchThatFailsOtherwiseSayItOnceAtWarn() {
		this.outages.failed("orders", new LeaderElectionException("Could not read 9999 groups: timed out"));
		for (int i = 0; i < 100; i++) {
			this.outages.failed("group-" + i, new LeaderElectionException("Could not read 9202 groups: timed out"));
		}
		assertThat(linesAt(Level.WARN)).hasSize(2)
			.anySatisfy((line) -> assertThat(line).contains("'orders'", "9999"))
			.anySatisfy((line) -> assertThat(line).contains("'group-0'", "9202"));
	}

	@Test
	void aSingleGroupsOutageReadsAsBefore() {
		this.outages.failed("orders", new LeaderElectionException("Connection refused"));
		this.outages.recovered("orders", 2);
		this.outages.failed("orders", new LeaderElectionException("Connection refused"));
		assertThat(linesAt(Level.INFO))
			.containsExactly("Election of group 'orders' reached the jdbc store again after 2 failed attempts");
		assertThat(linesAt(Level.WARN)).as("a new outage after the recovery").hasSize(2);
	}

	private List<String> linesAt(Level level) {
		return this.logged.list.stream()
			.filter((event) -> event.getLevel() == level)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

}
