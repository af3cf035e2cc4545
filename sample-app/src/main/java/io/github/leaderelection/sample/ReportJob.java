package io.github.leaderelection.sample;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A leader-only cron job: each tick runs once across the instances, whichever instance's
 * scheduler fires it, and a tick that passed while no instance led is run once by the
 * next leader when it takes over. The starter logs a catch-up and a tick skipped as
 * already run at INFO; {@code GET /} shows the job's last run and what this instance
 * caught up or skipped.
 */
@Component
public class ReportJob {

	private static final Logger logger = LoggerFactory.getLogger(ReportJob.class);

	@OnlyOnLeader
	@Scheduled(cron = "${sample.report-cron:0 * * * * *}")
	public void report() {
		Leadership leadership = LeadershipContext.current().orElseThrow();
		logger.info("Report ran as {} in term {}", leadership.candidateId(), leadership.term());
	}

}
