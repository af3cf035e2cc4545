package io.github.leaderelection.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WatcherRegistryTests {

	private final WatcherRegistry watchers = new WatcherRegistry();

	private final List<String> calls = new ArrayList<>();

	@Test
	void aNotificationCallsTheCallbacksOfItsGroupOnly() {
		this.watchers.add("orders", () -> this.calls.add("orders 1"));
		this.watchers.add("orders", () -> this.calls.add("orders 2"));
		this.watchers.add("payments", () -> this.calls.add("payments"));
		this.watchers.notifyGroup("orders");
		assertThat(this.calls).containsExactly("orders 1", "orders 2");
		this.watchers.notifyGroup("unknown");
		assertThat(this.calls).hasSize(2);
	}

	@Test
	void everyGroupCanBeNotifiedAtOnce() {
		this.watchers.add("orders", () -> this.calls.add("orders"));
		this.watchers.add("payments", () -> this.calls.add("payments"));
		this.watchers.notifyEveryGroup();
		assertThat(this.calls).containsExactlyInAnyOrder("orders", "payments");
	}

	@Test
	void aCallbackThatThrowsDoesNotKeepTheOthersFromBeingCalled() {
		this.watchers.add("orders", () -> {
			throw new IllegalStateException("broken");
		});
		this.watchers.add("orders", () -> this.calls.add("after"));
		this.watchers.notifyGroup("orders");
		assertThat(this.calls).containsExactly("after");
	}

	@Test
	void aClosedWatchIsNoLongerCalledAndClosingItAgainChangesNothing() throws Exception {
		Runnable shared = () -> this.calls.add("shared");
		AutoCloseable first = this.watchers.add("orders", shared);
		this.watchers.add("orders", shared);
		first.close();
		first.close();
		this.watchers.notifyGroup("orders");
		assertThat(this.calls).containsExactly("shared");
		assertThat(this.watchers.isEmpty()).isFalse();
	}

	@Test
	void closingTheLastWatchOfAnyGroupSaysSoOnce() throws Exception {
		AtomicInteger noneLeft = new AtomicInteger();
		AutoCloseable orders = this.watchers.add("orders", () -> {
		}, noneLeft::incrementAndGet);
		AutoCloseable payments = this.watchers.add("payments", () -> {
		}, noneLeft::incrementAndGet);
		orders.close();
		assertThat(noneLeft).hasValue(0);
		assertThat(this.watchers.isEmpty()).isFalse();
		payments.close();
		assertThat(noneLeft).hasValue(1);
		assertThat(this.watchers.isEmpty()).isTrue();
		payments.close();
		assertThat(noneLeft).hasValue(1);
	}

	@Test
	void aGroupWatchedAgainAfterItsLastWatchClosedIsCalled() throws Exception {
		this.watchers.add("orders", () -> this.calls.add("old")).close();
		this.watchers.add("orders", () -> this.calls.add("new"));
		this.watchers.notifyGroup("orders");
		assertThat(this.calls).containsExactly("new");
	}

}
