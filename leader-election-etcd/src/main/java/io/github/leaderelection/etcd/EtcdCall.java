package io.github.leaderelection.etcd;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.leaderelection.LeaderElectionException;

/** One store operation's calls to etcd, all within its one timeout. */
final class EtcdCall {

	private final String operation;

	private final String group;

	private final long deadline;

	EtcdCall(String operation, String group, Duration timeout) {
		this.operation = operation;
		this.group = group;
		this.deadline = System.nanoTime() + timeout.toNanos();
	}

	<T> T await(CompletableFuture<T> future) {
		try {
			return future.get(Math.max(0, this.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new LeaderElectionException(
					"Could not " + this.operation + " group '" + this.group + "' in etcd within the call's timeout",
					ex);
		}
		catch (InterruptedException ex) {
			future.cancel(true);
			Thread.currentThread().interrupt();
			throw new LeaderElectionException(
					"Interrupted while trying to " + this.operation + " group '" + this.group + "' in etcd", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new LeaderElectionException(
					"Could not " + this.operation + " group '" + this.group + "' in etcd: " + cause.getMessage(),
					cause);
		}
	}

}
