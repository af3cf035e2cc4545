package io.github.leaderelection.actuate;

import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.framework.ProxyFactory;

/**
 * An in-memory store whose every lease operation fails while the test cuts it off, as a
 * store outage would.
 */
public class OutageLeaseStore extends ForwardingLeaseStore {

	/** The calls that fail during an outage: the lease operations, batches included. */
	private static final Set<String> OPERATIONS = Set.of("read", "readAll", "tryAcquire", "tryAcquireAll", "renew",
			"renewAll", "release", "forceLeader", "clear");

	private final AtomicBoolean down;

	public OutageLeaseStore() {
		this(new AtomicBoolean());
	}

	private OutageLeaseStore(AtomicBoolean down) {
		super(failingWhile(down, new InMemoryLeaseStore()));
		this.down = down;
	}

	/** Makes every call fail until {@link #restore()}. */
	public void cutOff() {
		this.down.set(true);
	}

	public void restore() {
		this.down.set(false);
	}

	@Override
	public String backend() {
		return "outage-test";
	}

	private static LeaseStore failingWhile(AtomicBoolean down, LeaseStore store) {
		ProxyFactory factory = new ProxyFactory(store);
		factory.addAdvice((MethodInterceptor) (invocation) -> {
			if (down.get() && OPERATIONS.contains(invocation.getMethod().getName())) {
				throw new IllegalStateException("store unavailable (injected)");
			}
			return invocation.proceed();
		});
		return (LeaseStore) factory.getProxy();
	}

}
