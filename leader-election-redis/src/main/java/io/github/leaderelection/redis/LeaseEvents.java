package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.spi.WatcherRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.PatternTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * What a {@link RedisLeaseStore} hears of the changes its scripts announce, each on its
 * group's channel: one pub/sub connection, opened at the first watch, with one pattern
 * subscription to every channel under the key prefix (the channel pattern of the security
 * page's ACL), however many groups are watched. A message goes to the watches of its
 * channel; the others are dropped. The subscription is retried until Redis answers.
 */
final class LeaseEvents implements AutoCloseable {

	private static final Duration RETRY = Duration.ofSeconds(2);

	private static final Logger logger = LoggerFactory.getLogger(LeaseEvents.class);

	private final RedisConnectionFactory connectionFactory;

	private final PatternTopic pattern;

	private final WatcherRegistry watchers = new WatcherRegistry();

	private final MessageListener listener = this::received;

	private final Object monitor = new Object();

	private @Nullable RedisMessageListenerContainer container;

	private @Nullable ScheduledExecutorService retries;

	private boolean subscribing;

	/** Whether the last try to subscribe failed: the next success is logged. */
	private boolean failing;

	private boolean closed;

	/**
	 * @param connectionFactory the connections
	 * @param keyPrefix the key prefix, which every channel starts with; letters, digits
	 * and {@code _ . : -}, none of which a pattern gives a meaning
	 */
	LeaseEvents(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.connectionFactory = connectionFactory;
		this.pattern = new PatternTopic(keyPrefix + "*");
	}

	/** Calls {@code onChange} (which must not block) for every message on the channel. */
	AutoCloseable watch(String channel, Runnable onChange) {
		Objects.requireNonNull(onChange, "onChange");
		AutoCloseable watch = this.watchers.add(channel, onChange);
		subscribeOnce();
		return watch;
	}

	@Override
	public void close() {
		RedisMessageListenerContainer listeners;
		ScheduledExecutorService retrying;
		synchronized (this.monitor) {
			this.closed = true;
			listeners = this.container;
			retrying = this.retries;
			this.container = null;
			this.retries = null;
		}
		if (retrying != null) {
			retrying.shutdownNow();
		}
		if (listeners != null) {
			try {
				listeners.destroy();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Could not close the Redis lease store's pub/sub connection", ex);
			}
		}
	}

	private void received(Message message, byte @Nullable [] pattern) {
		this.watchers.notifyGroup(new String(message.getChannel(), StandardCharsets.UTF_8));
	}

	/**
	 * Subscribes to the pattern unless a call did or is doing so. The container then
	 * subscribes again by itself after a lost connection; a subscription that never
	 * started is retried here.
	 */
	private void subscribeOnce() {
		RedisMessageListenerContainer listeners;
		synchronized (this.monitor) {
			if (this.closed || this.subscribing) {
				return;
			}
			this.subscribing = true;
			if (this.container == null) {
				listeners = new RedisMessageListenerContainer();
				listeners.setConnectionFactory(this.connectionFactory);
				// The engine's callback only schedules an attempt: no need for a thread
				// per message.
				listeners.setTaskExecutor(Runnable::run);
				listeners.setBeanName("redisLeaseStoreListeners");
				listeners.afterPropertiesSet();
				listeners.start();
				this.container = listeners;
			}
			listeners = this.container;
		}
		try {
			listeners.addMessageListener(this.listener, this.pattern);
		}
		catch (RuntimeException ex) {
			boolean first;
			synchronized (this.monitor) {
				this.subscribing = false;
				first = !this.failing;
				this.failing = true;
			}
			if (first) {
				// Not silent: a user without PSUBSCRIBE rights would otherwise see only
				// hand-overs slowed to the retry period.
				logger.warn(
						"Could not subscribe to {} on Redis (retrying every {}); until then followers hear of "
								+ "released leases at their next retry instead of at once: {}",
						this.pattern.getTopic(), RETRY, ex.toString());
			}
			logger.debug("Could not subscribe to {}", this.pattern.getTopic(), ex);
			retryLater();
			return;
		}
		boolean recovered;
		synchronized (this.monitor) {
			recovered = this.failing;
			this.failing = false;
		}
		if (recovered) {
			logger.info("Subscribed to {} on Redis: followers hear of released leases at once again",
					this.pattern.getTopic());
		}
	}

	private void retryLater() {
		synchronized (this.monitor) {
			if (this.closed) {
				return;
			}
			if (this.retries == null) {
				this.retries = Executors.newSingleThreadScheduledExecutor((task) -> {
					Thread thread = new Thread(task, "redis-lease-store-watch");
					thread.setDaemon(true);
					return thread;
				});
			}
			this.retries.schedule(this::subscribeOnce, RETRY.toMillis(), TimeUnit.MILLISECONDS);
		}
	}

}
