package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What every process recorded around a leaderless interval that ended past its bound: the
 * records from a little before the gap to its end, in time order, each stamped with its
 * offset from the start of the gap; of the records about one group's election, only those
 * of the gap's group. A late gap is rare and timing-dependent, and the run's directory is
 * gone once the build's workspace is, so the story goes to the console with the verdict.
 */
final class GapTrace {

	/** How far before the gap the trace begins: the fault that caused it is in there. */
	private static final long BEFORE_NANOS = 2_500_000_000L;

	private static final long AFTER_NANOS = 100_000_000L;

	private GapTrace() {
	}

	/**
	 * The trace of each gap, times relative to the run's start as in
	 * {@link Liveness.Gap}.
	 */
	static String of(Path directory, List<Liveness.Gap> gaps) throws IOException {
		List<Record> records = records(directory);
		long origin = records.stream()
			.filter((record) -> record.line().startsWith("run "))
			.mapToLong(Record::time)
			.findFirst()
			.orElse(0);
		StringBuilder trace = new StringBuilder();
		for (Liveness.Gap gap : gaps) {
			long start = origin + gap.start();
			trace.append(String.format(Locale.ROOT,
					"Records around the gap at %.3f s (%.0f ms, %s, %.0f ms over) in group %s:%n", gap.start() / 1e9,
					gap.nanos() / 1e6, gap.cause(), (gap.end() - gap.deadline()) / 1e6, gap.group()));
			records.stream()
				.filter((record) -> record.time() >= start - BEFORE_NANOS
						&& record.time() <= origin + gap.end() + AFTER_NANOS)
				.filter((record) -> record.group() == null || record.group().equals(gap.group()))
				.forEach((record) -> trace.append(String.format(Locale.ROOT, "  %+9.1f ms  %-8s %s%n",
						(record.time() - start) / 1e6, record.source(), record.line())));
		}
		return trace.toString();
	}

	private static List<Record> records(Path directory) throws IOException {
		List<Record> records = new ArrayList<>();
		try (Stream<Path> files = Files.list(directory)) {
			for (Path file : files.filter((path) -> path.getFileName().toString().endsWith(".log")).toList()) {
				String name = file.getFileName().toString();
				String source = name.startsWith("node-") ? name.substring(5, name.length() - 4) : "harness";
				for (String line : Files.readAllLines(file)) {
					Long time = time(line);
					if (time != null) {
						records.add(new Record(time, source, line, EventLog.groupOf(line.split(" "))));
					}
				}
			}
		}
		records.sort(Comparator.comparingLong(Record::time));
		return records;
	}

	/**
	 * The first instant a record names, or null for records left out (the 1 ms probe and
	 * the clock samples would drown the rest).
	 */
	private static Long time(String line) {
		String[] fields = line.split(" ");
		if (fields.length < 2 || fields[0].equals("probe") || fields[0].equals("clock")) {
			return null;
		}
		// A fault names its type first, then its start.
		String time = fields[0].equals("fault") ? fields[2] : fields[1];
		try {
			return Long.parseLong(time);
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	private record Record(long time, String source, String line, String group) {
	}

}
