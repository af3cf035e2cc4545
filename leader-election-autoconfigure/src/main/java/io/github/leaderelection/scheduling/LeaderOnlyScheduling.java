package io.github.leaderelection.scheduling;

import java.util.Objects;

import org.springframework.core.Ordered;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Has Spring schedule its tasks through a {@link LeaderOnlyTaskScheduler}, so that the
 * tasks of scheduled leader-only methods claim their ticks. Ordered last, so that it
 * wraps the scheduler that other configurers chose.
 */
public final class LeaderOnlyScheduling implements SchedulingConfigurer, Ordered {

	private final ScheduledJobs jobs;

	/**
	 * @param jobs where the jobs found are kept
	 */
	public LeaderOnlyScheduling(ScheduledJobs jobs) {
		this.jobs = Objects.requireNonNull(jobs, "jobs");
	}

	@Override
	public void configureTasks(ScheduledTaskRegistrar registrar) {
		TaskScheduler scheduler = registrar.getScheduler();
		if (scheduler != null && !(scheduler instanceof LeaderOnlyTaskScheduler)) {
			registrar.setTaskScheduler(new LeaderOnlyTaskScheduler(scheduler, this.jobs));
		}
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
