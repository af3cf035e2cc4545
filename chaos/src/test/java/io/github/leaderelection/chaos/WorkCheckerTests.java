package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The work checker on records written by hand, in milliseconds from the start of the run,
 * whose wall clock starts at 0 (so a tick is its millisecond of the run): every node on
 * the chaos timing (lease 2000, renew deadline 1500, retry 400 ms), which makes the bound
 * 2000 + 2 x 400 + 400 = 3200 ms, and the time to catch up after it a tick and two store
 * calls, 1800 ms.
 */
class WorkCheckerTests {

	@TempDir
	Path directory;

	private final Map<String, List<String>> nodes = new LinkedHashMap<>();

	private final List<String> harness = new ArrayList<>();

	private long endMillis = 10_000;

	@Test
	void aTickRunTwiceFails() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 10_000, 1);
		run("a", 5000, 5000, 1, "plain"); // again
		ChaosSummary summary = check();
		assertThat(summary.work().duplicates()).isOne();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.passed()).isFalse();
		assertThat(summary.violations()).singleElement()
			.asString()
			.contains("1 ticks of the leader-only job run twice");
	}

	@Test
	void aCatchUpCoveringATickThatRanIsADuplicate() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 10_000, 1);
		run("a", 6000, 4000, 1, "catch-up"); // 4000, 5000 and 6000 again
		assertThat(check().work().duplicates()).isEqualTo(3);
	}

	@Test
	void aTickNeitherRunNorCoveredWhileTheGroupHadALeaderIsLost() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 3000, 1);
		runs("a", 5000, 10_000, 1); // 4000 never ran, though a led
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).containsExactly(4000L);
		assertThat(summary.work().ticksCovered()).isEqualTo(4); // 2000 to 6000 judged
		assertThat(summary.passed()).isFalse();
		assertThat(summary.violations()).singleElement().asString().contains("1 ticks of the leader-only job lost");
	}

	@Test
	void ticksANewLeaderCaughtUpAreCovered() throws IOException {
		leads("a", 0, 3000, 1);
		runs("a", 1000, 3000, 1);
		death("a", 3100);
		leads("b", 5000, 12_000, 2);
		run("b", 5000, 4000, 2, "catch-up"); // 4000 and 5000, once
		runs("b", 6000, 12_000, 2);
		this.endMillis = 12_000;
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.work().duplicates()).isZero();
		assertThat(summary.work().catchUps()).isOne();
		assertThat(summary.work().ticksCovered()).isEqualTo(7); // 2000 to 8000 judged
		assertThat(summary.passed()).isTrue();
		// Without the catch-up, 4000 and 5000 were lost while b led.
		this.nodes.get("b").removeIf((line) -> line.contains("catch-up"));
		assertThat(check().work().lost()).containsExactly(4000L, 5000L);
	}

	@Test
	void aTickYoungerThanItsBoundAtTheEndIsNotJudged() throws IOException {
		leads("a", 0, 13_000, 1);
		runs("a", 1000, 6000, 1);
		// Judged up to 9000 (13000 - 3200); 7000 is lost, since a led for 1800 ms after
		// its bound (10200 to 12700, when a's belief ended at the latest); 8000 would
		// have had to be caught up from 11200, and 9000 from 12200, too late for that.
		this.endMillis = 13_000;
		assertThat(check().work().lost()).containsExactly(7000L);
		this.endMillis = 10_000;
		assertThat(check().work().lost()).isEmpty();
		assertThat(check().passed()).isTrue();
	}

	@Test
	void ticksUnclaimableAfterAPlainRunOfAClockAheadAreCoveredAheadNotLost() throws IOException {
		leads("a", 0, 3000, 1);
		runs("a", 1000, 3000, 1);
		leads("b", 3000, 12_000, 2);
		// b's clock jumped an hour ahead: its plain run claims a tick far past the run,
		// and
		// the store refuses every tick of a true clock up to it.
		claimAt("b", 4000, 3_604_000, 3_604_000, 2, "plain", "run");
		this.endMillis = 12_000;
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.work().ticksCovered()).isEqualTo(7); // 2000 to 8000 judged
		assertThat(summary.passed()).isTrue();
	}

	@Test
	void aTickWithoutALeaderAfterItsBoundIsNotLost() throws IOException {
		leads("a", 0, 5000, 1);
		runs("a", 1000, 3000, 1);
		death("a", 3100);
		this.endMillis = 20_000; // nobody led again: the liveness check's to report
		assertThat(check().work().lost()).isEmpty();
	}

	@Test
	void aTickWhoseClaimEndedInAnErrorOrAKillIsNotJudged() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 3000, 1);
		claim("a", 4000, 4000, 1, "plain", "error");
		record("a", "job-start", ms(5000), 5000, 5000, 1, "plain"); // no outcome
		runs("a", 6000, 10_000, 1);
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.work().uncertain()).isEqualTo(2);
	}

	@Test
	void ticksLostWithTheStoresDataAreNotJudgedNorTheirRunsAgain() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 3000, 1);
		fault("lose-store-data", 3200, 3300);
		// The next run cannot know the last one: 4000 is gone; 3000 runs again.
		runs("a", 5000, 10_000, 1);
		claimAt("a", 5500, 3000, 3000, 1, "plain", "run");
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.work().lostWithData()).isOne();
		assertThat(summary.work().duplicates()).isZero();
		assertThat(summary.work().duplicatesAcrossDataLoss()).isOne();
		assertThat(summary.passed()).isTrue();
	}

	@Test
	void aTickClaimedWhileALossIsWrittenAndRunAgainAfterItIsADuplicateAcrossTheLoss() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 10_000, 1);
		// A restore written from 4500 to 5500 puts back the record of 3000: 5000, claimed
		// at 5000, runs again after it.
		fault("lose-store-data", 4500, 5500);
		claimAt("a", 6500, 5000, 4000, 1, "catch-up", "run");
		ChaosSummary summary = check();
		assertThat(summary.work().duplicates()).isZero();
		assertThat(summary.work().duplicatesAcrossDataLoss()).isPositive();
		assertThat(summary.passed()).isTrue();
		// The same run again without the loss is a duplicate.
		this.harness.clear();
		assertThat(check().work().duplicates()).isPositive();
	}

	@Test
	void aRestoreOfAnOlderCopyLengthensTheBoundByALease() throws IOException {
		// The copy may bring back a lease that still runs, which the next holder waits
		// for before the lost wait: 3200 (lease 2000 + 2 retry periods + 1) and a lease.
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 9000, 1);
		this.endMillis = 10_000;
		fault("lose-store-data", 4500, 4600, "delete-record:chaos");
		assertThat(check().work().boundMillis()).isEqualTo(3200);
		fault("lose-store-data", 6500, 6600, "restore:1-rows-copied-900ms-before");
		assertThat(check().work().boundMillis()).isEqualTo(5200);
	}

	@Test
	void aLeaderWhoseClockIsBehindCannotLoseTicksItsClockHasNotReached() throws IOException {
		leads("a", 0, 3000, 1);
		runs("a", 1000, 3000, 1);
		death("a", 3100);
		// b's clock is a minute behind: its ticks, 60 s before the run's, are refused.
		leads("b", 3500, 12_000, 2);
		this.endMillis = 12_000;
		for (long at = 3500; at < 12_000; at += 1000) {
			record("b", "clock", ms(at), at - 60_000);
		}
		assertThat(check().work().lost()).isEmpty();
		// With a true clock, it had to catch up (the ticks judged up to 6000: b led for
		// 1800 ms after their bound).
		this.nodes.get("b").removeIf((line) -> line.startsWith("clock"));
		assertThat(check().work().lost()).containsExactly(4000L, 5000L, 6000L);
	}

	@Test
	void aClockAheadCoversTheTicksItJumpedOverBeforeTheyAreDue() throws IOException {
		leads("a", 0, 10_000, 1);
		runs("a", 1000, 3000, 1);
		// a's clock jumps 20 s ahead: it catches up to its new second, and the true
		// clocks' claims are refused until theirs get there.
		claimAt("a", 3200, 23_000, 4000, 1, "catch-up", "run");
		ChaosSummary summary = check();
		assertThat(summary.work().lost()).isEmpty();
		assertThat(summary.work().ticksCovered()).isEqualTo(5); // 2000 to 6000
		assertThat(summary.work().coveredAhead()).isEqualTo(3); // 4000 to 6000
		assertThat(summary.passed()).isTrue();
	}

	// Records

	/**
	 * The node leads from {@code from} (acquired then) and renews every 400 ms until
	 * {@code to}, so that its belief lasts until then plus the renew deadline at most.
	 */
	private void leads(String key, long from, long to, long term) {
		if (!this.nodes.containsKey(key)) {
			this.nodes.put(key, new ArrayList<>());
			record(key, "node", 0, key, 1, key + "-1", "library", "on", ms(1500));
			record(key, "ready", 0);
		}
		record(key, "acquire", ms(from), ms(from + 10), "taken", term, 0);
		for (long at = from + 400; at + 1500 <= to; at += 400) {
			record(key, "renew-start", ms(at), term);
			record(key, "renew-end", ms(at), ms(at + 10), term, "true");
		}
	}

	/**
	 * Plain runs of every tick from {@code from} to {@code to}, each claimed at its tick.
	 */
	private void runs(String key, long from, long to, long term) {
		for (long tick = from; tick <= to; tick += 1000) {
			run(key, tick, tick, term, "plain");
		}
	}

	/** A run of a tick, claimed at the tick, covering from {@code first}. */
	private void run(String key, long tick, long first, long term, String kind) {
		claim(key, tick, first, term, kind, "run");
	}

	private void claim(String key, long tick, long first, long term, String kind, String outcome) {
		claimAt(key, tick, tick, first, term, kind, outcome);
	}

	private void claimAt(String key, long at, long tick, long first, long term, String kind, String outcome) {
		record(key, "job-start", ms(at), tick, first, term, kind);
		record(key, "job", ms(at), ms(at + 5), tick, first, term, kind, outcome);
	}

	private void death(String key, long at) {
		this.harness.add("death " + ms(at) + " " + ms(at) + " " + key + " kill");
	}

	private void fault(String type, long start, long end) {
		fault(type, start, end, "-");
	}

	private void fault(String type, long start, long end, String detail) {
		this.harness.add("fault " + type + " " + ms(start) + " " + ms(end) + " store " + detail);
	}

	private void record(String key, Object... fields) {
		StringBuilder line = new StringBuilder();
		for (Object field : fields) {
			line.append((line.length() > 0) ? " " : "").append(field);
		}
		if (EventLog.isAboutAGroup(fields[0].toString())) {
			line.append(' ').append(ChaosSettings.GROUP);
		}
		this.nodes.get(key).add(line.toString());
	}

	private static long ms(long millis) {
		return millis * 1_000_000;
	}

	private ChaosSummary check() throws IOException {
		for (Map.Entry<String, List<String>> node : this.nodes.entrySet()) {
			Files.write(this.directory.resolve("node-" + node.getKey() + ".log"), node.getValue());
		}
		List<String> lines = new ArrayList<>();
		lines.add("run 0 0 test jdbc-mariadb 1 library on " + ms(2000) + " " + ms(1500) + " " + ms(400)
				+ " 1 unbalanced");
		lines.addAll(this.harness);
		lines.add("end " + ms(this.endMillis));
		Files.write(this.directory.resolve("harness.log"), lines);
		ChaosSettings settings = ChaosSettings.safe(Backend.JDBC_MARIADB, 1, null, 1, this.directory.resolve("out"))
			.withTimings(Collections.nCopies(3, ChaosSettings.TIMING));
		return Checker.check(this.directory, settings);
	}

}
