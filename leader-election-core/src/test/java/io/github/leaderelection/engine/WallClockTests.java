package io.github.leaderelection.engine;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A wall-clock jump on an application node must change nothing, so the code that decides
 * who leads never reads the wall clock: beliefs use the monotonic clock and leases the
 * store's clock. Checked on the compiled classes, where every method a class calls is
 * named.
 */
class WallClockTests {

	private static final List<String> WALL_CLOCK_READS = List.of("currentTimeMillis", "java/time/Clock",
			"java/time/Instant", "java/time/LocalDateTime", "java/time/ZonedDateTime", "java/util/Date");

	@Test
	void engineAndStoresNeverReadTheWallClock() throws Exception {
		Path classes = classesRoot();
		List<Path> checked;
		try (Stream<Path> files = Files.walk(classes)) {
			checked = files.filter((file) -> file.toString().endsWith(".class"))
				.filter((file) -> isDecidingCode(classes.relativize(file).toString()))
				.toList();
		}
		assertThat(checked).as("classes found under %s", classes).isNotEmpty();
		for (Path file : checked) {
			String constants = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
			assertThat(WALL_CLOCK_READS).as("wall-clock reads in %s", classes.relativize(file))
				.noneMatch(constants::contains);
		}
	}

	@Test
	void theScanWouldSeeAWallClockRead() throws IOException {
		try (InputStream in = WallClockTests.class.getResourceAsStream("WallClockTests$Reader.class")) {
			String constants = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
			assertThat(WALL_CLOCK_READS).anyMatch(constants::contains);
		}
	}

	private static boolean isDecidingCode(String path) {
		String normalized = path.replace('\\', '/');
		return Stream.of("engine/", "spi/", "memory/", "jdbc/")
			.anyMatch((pkg) -> normalized.startsWith("io/github/leaderelection/" + pkg));
	}

	private static Path classesRoot() throws URISyntaxException {
		Path leaseStoreClass = Path.of(LeaseStore.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		return leaseStoreClass;
	}

	static final class Reader {

		long read() {
			return System.currentTimeMillis();
		}

	}

}
