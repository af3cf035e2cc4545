package io.github.leaderelection.sample;

import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The leader-only job: every instance schedules it, only the leader of the default group runs it.
 */
@Component
public class SampleJob {

	private static final Logger logger = LoggerFactory.getLogger(SampleJob.class);

	private final JobRunLog log;

	public SampleJob(JobRunLog log) {
		this.log = log;
	}

	@OnlyOnLeader
	@Scheduled(fixedDelayString = "${sample.job-interval:1s}")
	public void run() {
		LeadershipContext.current().ifPresent((leadership) -> {
			if (this.log.record(leadership)) {
				logger.debug("Job ran in term {}", leadership.term());
			}
		});
	}

}
