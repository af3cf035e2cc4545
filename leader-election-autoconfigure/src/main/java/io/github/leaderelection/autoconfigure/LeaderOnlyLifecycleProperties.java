package io.github.leaderelection.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for lifecycle beans that run only on the leader.
 */
@ConfigurationProperties("leader-election.lifecycle")
public class LeaderOnlyLifecycleProperties {

	/**
	 * Names of Lifecycle beans (such as message listener containers) that run only while
	 * this instance leads the application's group: not started with the context, started
	 * when leadership is granted and stopped when it is revoked. Beans of other groups
	 * are annotated with LeaderOnlyLifecycle.
	 */
	private List<String> beans = new ArrayList<>();

	public List<String> getBeans() {
		return this.beans;
	}

	public void setBeans(List<String> beans) {
		this.beans = beans;
	}

}
