package io.github.leaderelection.engine;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
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

	/**
	 * Calls that read the wall clock, as {@code owner.name}; a method whose owner alone
	 * is listed ({@code java/time/Clock}) counts with any name. Carrying an
	 * {@code Instant} a caller gave is no read.
	 */
	private static final List<String> WALL_CLOCK_READS = List.of("java/lang/System.currentTimeMillis",
			"java/time/Instant.now", "java/time/Clock", "java/time/InstantSource", "java/time/LocalDateTime.now",
			"java/time/ZonedDateTime.now", "java/time/OffsetDateTime.now", "java/time/LocalDate.now",
			"java/util/Date.<init>");

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
			List<String> calls = calledMethods(Files.readAllBytes(file));
			assertThat(calls).as("wall-clock reads in %s", classes.relativize(file))
				.noneMatch(WallClockTests::readsWallClock);
		}
	}

	@Test
	void theScanWouldSeeAWallClockRead() throws IOException {
		try (InputStream in = WallClockTests.class.getResourceAsStream("WallClockTests$Reader.class")) {
			assertThat(calledMethods(in.readAllBytes())).anyMatch(WallClockTests::readsWallClock);
		}
	}

	@Test
	void theScanLetsAnInstantThroughThatIsOnlyCarried() throws IOException {
		try (InputStream in = WallClockTests.class.getResourceAsStream("WallClockTests$Carrier.class")) {
			assertThat(calledMethods(in.readAllBytes())).noneMatch(WallClockTests::readsWallClock)
				.anyMatch((call) -> call.startsWith("java/time/Instant."));
		}
	}

	private static boolean readsWallClock(String call) {
		return WALL_CLOCK_READS.stream()
			.anyMatch((read) -> call.equals(read) || (!read.contains(".") && call.startsWith(read + ".")));
	}

	/**
	 * The methods a class file refers to, as {@code owner.name}, read from its constant
	 * pool (JVMS 4.4).
	 */
	static List<String> calledMethods(byte[] classFile) throws IOException {
		DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
		in.skipBytes(8); // magic, minor and major version
		int count = in.readUnsignedShort();
		String[] utf8 = new String[count];
		int[] classNames = new int[count];
		int[][] refs = new int[count][];
		int[] nameAndTypeNames = new int[count];
		for (int i = 1; i < count; i++) {
			int tag = in.readUnsignedByte();
			switch (tag) {
				case 1 -> utf8[i] = in.readUTF();
				case 7 -> classNames[i] = in.readUnsignedShort();
				case 8, 16, 19, 20 -> in.skipBytes(2);
				case 15 -> in.skipBytes(3);
				case 3, 4, 17, 18 -> in.skipBytes(4);
				case 9, 10, 11 -> refs[i] = new int[] { in.readUnsignedShort(), in.readUnsignedShort() };
				case 12 -> {
					nameAndTypeNames[i] = in.readUnsignedShort();
					in.skipBytes(2);
				}
				case 5, 6 -> {
					in.skipBytes(8);
					i++; // a long or a double takes two entries
				}
				default -> throw new IOException("Unknown constant pool tag " + tag + " at entry " + i);
			}
		}
		List<String> calls = new ArrayList<>();
		for (int[] ref : refs) {
			if (ref != null) {
				calls.add(utf8[classNames[ref[0]]] + "." + utf8[nameAndTypeNames[ref[1]]]);
			}
		}
		return calls;
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

	static final class Carrier {

		long carry(Instant given) {
			return given.toEpochMilli();
		}

	}

}
