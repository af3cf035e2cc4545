package io.github.leaderelection.aop;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Consumer;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RunOutcome;
import org.jspecify.annotations.Nullable;

/**
 * The work of a leader-only method that returned a {@link CompletionStage} still under
 * way, from the method's return until the stage completes: a revocation cancels it (where
 * the method asks for interruption and the stage is a {@link Future}), a shutdown waits
 * for it.
 */
final class PendingResult extends DeferredRun {

	private final CompletionStage<?> stage;

	private final String method;

	PendingResult(Leadership leadership, boolean interruptOnRevoke, CompletionStage<?> stage, String method) {
		super(leadership, interruptOnRevoke);
		this.stage = stage;
		this.method = method;
	}

	/**
	 * Runs the action once the stage has completed (at once if it has), then counts the
	 * work as ended.
	 */
	void whenCompleted(Consumer<RunOutcome> action) {
		onEnd(action);
		this.stage.whenComplete((result, failure) -> end(outcome(failure)));
	}

	private static RunOutcome outcome(@Nullable Throwable failure) {
		if (failure == null) {
			return RunOutcome.SUCCEEDED;
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof CancellationException) ? RunOutcome.CANCELLED : RunOutcome.FAILED;
	}

	@Override
	public void interrupt() {
		if (this.stage instanceof Future<?> future) {
			future.cancel(true);
		}
	}

	@Override
	public String where() {
		return "in the result " + this.method + " returned";
	}

}
