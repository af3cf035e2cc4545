package io.github.leaderelection.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link GateBenchmark} with JMH and returns ns per call for each benchmark.
 */
final class Gate {

	private Gate() {
	}

	static List<Map<String, Object>> run(boolean full) throws Exception {
		ChainedOptionsBuilder options = new OptionsBuilder().include(GateBenchmark.class.getName() + "\\.")
			.jvmArgsAppend(Coordinates.systemProperties().toArray(new String[0]))
			.jvmArgsAppend("-Xms256m", "-Xmx256m", "-Dlogback.configurationFile=logback-node.xml")
			.shouldFailOnError(true);
		if (full) {
			options.forks(2)
				.warmupIterations(5)
				.warmupTime(TimeValue.seconds(1))
				.measurementIterations(5)
				.measurementTime(TimeValue.seconds(2));
		}
		else {
			options.forks(1)
				.warmupIterations(2)
				.warmupTime(TimeValue.seconds(1))
				.measurementIterations(2)
				.measurementTime(TimeValue.seconds(1));
		}
		Collection<RunResult> results = new Runner(options.build()).run();
		List<Map<String, Object>> rows = new ArrayList<>();
		for (RunResult result : results) {
			String name = result.getParams().getBenchmark();
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("benchmark", name.substring(name.lastIndexOf('.') + 1));
			row.put("nsPerCall", result.getPrimaryResult().getScore());
			row.put("error99", result.getPrimaryResult().getScoreError());
			row.put("forks", result.getParams().getForks());
			row.put("iterations", result.getPrimaryResult().getStatistics().getN());
			rows.add(row);
		}
		return rows;
	}

}
