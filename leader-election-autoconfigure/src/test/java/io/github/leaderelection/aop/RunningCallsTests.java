package io.github.leaderelection.aop;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RunningCalls}.
 */
class RunningCallsTests {

	@Test
	void seesEveryCallUntilRemovedIncludingCallsBeyondTheSlots() {
		RunningCalls<Object> running = new RunningCalls<>(4);
		List<Object> calls = new ArrayList<>();
		List<Integer> tokens = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			Object call = new Object();
			calls.add(call);
			tokens.add(running.add(call));
		}
		assertThat(tokens).contains(-1);
		assertThat(seen(running)).containsExactlyInAnyOrderElementsOf(calls);
		for (int i = 0; i < 10; i += 2) {
			running.remove(tokens.get(i), calls.get(i));
		}
		assertThat(seen(running)).containsExactlyInAnyOrder(calls.get(1), calls.get(3), calls.get(5), calls.get(7),
				calls.get(9));
		for (int i = 1; i < 10; i += 2) {
			running.remove(tokens.get(i), calls.get(i));
		}
		assertThat(seen(running)).isEmpty();
	}

	@Test
	void reusesFreedSlots() {
		RunningCalls<Object> running = new RunningCalls<>(4);
		Object first = new Object();
		int token = running.add(first);
		assertThat(token).isNotNegative();
		running.remove(token, first);
		Object second = new Object();
		assertThat(running.add(second)).isEqualTo(token);
		assertThat(seen(running)).containsExactly(second);
	}

	private static List<Object> seen(RunningCalls<Object> running) {
		List<Object> seen = new ArrayList<>();
		running.forEach(seen::add);
		return seen;
	}

}
