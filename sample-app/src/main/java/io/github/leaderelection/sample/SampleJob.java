package io.github.leaderelection.sample;

import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The leader-only job: every instance schedules it, only the leader of the default group
 * runs it.
 */
@Component
public class SampleJob {

	private static final Logger logger = LoggerFactory.getLogger(SampleJob.class);

	private final JobRunLog log;

	public SampleJob(JobRunLog log) {
		this.log = log;
	}

	/** Runs in the current term so far; touched only by the scheduler's thread. */
	private long runsInTerm;

	private long term;

	@OnlyOnLeader
	@Scheduled(fixedDelayString = "${sample.job-interval:1s}")
	public void run() {
		LeadershipContext.current().ifPresent((leadership) -> {
			if (!this.log.record(leadership)) {
				return;
			}
			if (leadership.term() != this.term) {
				this.term = leadership.term();
				this.runsInTerm = 0;
			}
			this.runsInTerm++;
			// The first run of a term, then every tenth: enough to watch who works
			// without a line a second.
			if (this.runsInTerm == 1 || this.runsInTerm % 10 == 0) {
				logger.info("Leader-only job ran as {} in term {} (run {} of this term); GET / lists the last runs",
						leadership.candidateId(), leadership.term(), this.runsInTerm);
			}
		});
	}

}
