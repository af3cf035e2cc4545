package io.github.leaderelection.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code leaderelection} endpoint over HTTP: each failed action answers a status an
 * operator can act on, with a small JSON body, instead of a 500.
 *
 * <ul>
 * <li>400: the request is wrong (no or an invalid candidate id, an unknown action);</li>
 * <li>404: this instance takes no part in the group;</li>
 * <li>409: the state refused it (for example forcing a candidate that takes no part in
 * the group);</li>
 * <li>429: the group had as many actions as the window allows ({@code retryAfterSeconds}
 * says when to ask again);</li>
 * <li>503: the store failed; the action may or may not have taken effect;</li>
 * <li>504: the store did not answer in time; the action may still take effect.</li>
 * </ul>
 */
@EndpointWebExtension(endpoint = LeaderElectionEndpoint.class)
class LeaderElectionEndpointWebExtension {

	private final LeaderElectionEndpoint endpoint;

	/**
	 * Creates the extension.
	 * @param endpoint the endpoint it extends
	 */
	LeaderElectionEndpointWebExtension(LeaderElectionEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Performs an administrator's action on a group, as
	 * {@link LeaderElectionEndpoint#act} does.
	 * @param group the group
	 * @param action {@code yield}, {@code force-leader} or {@code force-reelection}
	 * @param candidateId the candidate to make leader, for {@code force-leader}
	 * @return what was done, or why not with the status that says so
	 */
	@WriteOperation
	public WebEndpointResponse<Object> act(@Selector String group, @Selector String action,
			@Nullable String candidateId) {
		try {
			return new WebEndpointResponse<>(this.endpoint.act(group, action, candidateId));
		}
		catch (ActionFailedException ex) {
			return failed(group, action, ex);
		}
	}

	/**
	 * Performs an administrator's action on this instance, as
	 * {@link LeaderElectionEndpoint#actOnInstance} does.
	 * @param action {@code rebalance}
	 * @return what was done, or why not with the status that says so
	 */
	@WriteOperation
	public WebEndpointResponse<Object> actOnInstance(String action) {
		try {
			return new WebEndpointResponse<>(this.endpoint.actOnInstance(action));
		}
		catch (ActionFailedException ex) {
			return failed(null, action, ex);
		}
	}

	private static String shown(String value) {
		return (value.length() <= RequestValues.MAX_LENGTH && value.chars().noneMatch(Character::isISOControl)) ? value
				: RequestValues.escape(value);
	}

	private static WebEndpointResponse<Object> failed(@Nullable String group, String action, ActionFailedException ex) {
		Map<String, Object> body = new LinkedHashMap<>();
		// Shown as sent only when they are sane: the message escapes them otherwise.
		if (group != null) {
			body.put("group", shown(group));
		}
		body.put("action", shown(action));
		body.put("status", ex.kind().status());
		body.put("error", ex.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
		body.put("message", ex.getMessage());
		body.put("mayStillTakeEffect", ex.kind().mayStillTakeEffect());
		if (ex.retryAfter() != null) {
			body.put("retryAfterSeconds", ex.retryAfter().toSeconds());
		}
		return new WebEndpointResponse<>(body, ex.kind().status());
	}

}
