package io.github.leaderelection.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The subscriptions of a {@link RedisLeaseStore} to the channels its scripts announce
 * changes on: one pub/sub connection, opened at the first watch, and subscriptions that
 * are retried until Redis answers.
 */
final class LeaseEvents implements AutoCloseable {

	private static final Duration RETRY = Duration.ofSeconds(2);

	private static final Logger logger = LoggerFactory.getLogger(LeaseEvents.class);

	private final RedisConnectionFactory connectionFactory;

	private final Object monitor = new Object();

	private @Nullable RedisMessageListenerContainer container;

	private @Nullable ScheduledExecutorService retries;

	private boolean closed;

	LeaseEvents(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/** Calls {@code onChange} (which must not block) for every message on the channel. */
	AutoCloseable watch(String channel, Runnable onChange) {
		Objects.requireNonNull(onChange, "onChange");
		Watch watch = new Watch(new ChannelTopic(channel), (message, pattern) -> onChange.run());
		subscribe(watch);
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

	private void subscribe(Watch watch) {
		RedisMessageListenerContainer listeners;
		synchronized (this.monitor) {
			if (this.closed || watch.closed) {
				return;
			}
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
			listeners.addMessageListener(watch.listener, watch.topic);
			if (watch.closed) {
				listeners.removeMessageListener(watch.listener, watch.topic);
			}
		}
		catch (RuntimeException ex) {
			// The container recovers a subscription that Redis dropped, not one that
			// never started.
			logger.debug("Could not subscribe to {}; retrying in {}", watch.topic.getTopic(), RETRY, ex);
			retryLater(watch);
		}
	}

	private void retryLater(Watch watch) {
		synchronized (this.monitor) {
			if (this.closed || watch.closed) {
				return;
			}
			if (this.retries == null) {
				this.retries = Executors.newSingleThreadScheduledExecutor((task) -> {
					Thread thread = new Thread(task, "redis-lease-store-watch");
					thread.setDaemon(true);
					return thread;
				});
			}
			this.retries.schedule(() -> subscribe(watch), RETRY.toMillis(), TimeUnit.MILLISECONDS);
		}
	}

	/** One subscription: a listener on a channel, until closed. */
	private final class Watch implements AutoCloseable {

		final ChannelTopic topic;

		final MessageListener listener;

		volatile boolean closed;

		Watch(ChannelTopic topic, MessageListener listener) {
			this.topic = topic;
			this.listener = listener;
		}

		@Override
		public void close() {
			this.closed = true;
			RedisMessageListenerContainer listeners;
			synchronized (LeaseEvents.this.monitor) {
				listeners = LeaseEvents.this.container;
			}
			if (listeners != null) {
				listeners.removeMessageListener(this.listener, this.topic);
			}
		}

	}

}
