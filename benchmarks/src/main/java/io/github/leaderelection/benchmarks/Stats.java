package io.github.leaderelection.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Percentiles by nearest rank: with 20 samples, p50 is the 10th smallest and p99 the
 * largest.
 */
final class Stats {

	private Stats() {
	}

	static double percentile(List<Double> samples, double p) {
		if (samples.isEmpty()) {
			return Double.NaN;
		}
		List<Double> sorted = new ArrayList<>(samples);
		Collections.sort(sorted);
		int rank = (int) Math.ceil(p / 100.0 * sorted.size());
		return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
	}

	static double max(List<Double> samples) {
		return samples.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
	}

}
