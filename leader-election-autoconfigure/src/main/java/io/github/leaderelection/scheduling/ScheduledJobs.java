package io.github.leaderelection.scheduling;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.aop.OnlyOnLeaderPointcut;
import io.github.leaderelection.jobs.JobSchedule;
import io.github.leaderelection.jobs.LeaderOnlyJob;
import io.github.leaderelection.jobs.MissedTicks;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.KotlinDetector;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.support.ScheduledMethodRunnable;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The scheduled leader-only methods of the application, as jobs of their groups: found
 * among the tasks Spring schedules, and caught up when this instance becomes leader of
 * their group.
 *
 * <p>
 * A scheduled method's task is Spring's {@link ScheduledMethodRunnable}, or, for a
 * reactive method or a Kotlin suspending function, a subscribing task that names the
 * bean's class and the method. A method is a job of its group under
 * {@code <bean name>.<method name>}.
 */
public final class ScheduledJobs implements LeaderElectionListener {

	private static final Logger logger = LoggerFactory.getLogger(ScheduledJobs.class);

	/** Spring's task for a reactive {@code @Scheduled} method, which is not public. */
	private static final String SUBSCRIBING_TASK = "ScheduledAnnotationReactiveSupport$SubscribingRunnable";

	/**
	 * What Spring (6.2 and later) wraps each registered task in, to note how its last run
	 * ended; not public, and it does not give its task out.
	 */
	private static final String OUTCOME_TRACKING_TASK = "Task$OutcomeTrackingRunnable";

	private final Supplier<LeaderElectionRegistry> registry;

	private final Supplier<String> defaultGroup;

	private final Supplier<MissedTicks> defaults;

	private final ConfigurableListableBeanFactory beanFactory;

	private final Supplier<ObservationRegistry> observations;

	private final List<ScheduledJob> jobs = new CopyOnWriteArrayList<>();

	private final List<Consumer<ScheduledJob>> watchers = new CopyOnWriteArrayList<>();

	/** The groups whose run records were read once at startup. */
	private final Set<String> probedGroups = ConcurrentHashMap.newKeySet();

	/**
	 * @param registry the elections of the groups
	 * @param defaultGroup the group of annotations that name none
	 * @param defaults the missed-tick policy of annotations that set none
	 * @param beanFactory the beans whose methods are scheduled
	 * @param observations where each run is observed
	 */
	public ScheduledJobs(Supplier<LeaderElectionRegistry> registry, Supplier<String> defaultGroup,
			Supplier<MissedTicks> defaults, ConfigurableListableBeanFactory beanFactory,
			Supplier<ObservationRegistry> observations) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
		this.defaults = Objects.requireNonNull(defaults, "defaults");
		this.beanFactory = Objects.requireNonNull(beanFactory, "beanFactory");
		this.observations = Objects.requireNonNull(observations, "observations");
	}

	/** The jobs found so far, in the order they were scheduled. */
	public List<ScheduledJob> jobs() {
		return List.copyOf(this.jobs);
	}

	/**
	 * Applies an action to each job found so far and to each found later, such as
	 * registering its meters.
	 * @param action the action
	 */
	public synchronized void forEachJob(Consumer<ScheduledJob> action) {
		this.watchers.add(action);
		this.jobs.forEach(action);
	}

	/**
	 * The job of a task the scheduler is asked to schedule, if it calls a leader-only
	 * method; a job found is caught up at once if this instance already leads its group.
	 * @param task the task
	 * @param schedule when it is due
	 * @param scheduler the scheduler that runs it
	 * @return the job, or null for a task of any other kind
	 */
	@Nullable ScheduledJob register(Runnable task, JobSchedule schedule, TaskScheduler scheduler) {
		ScheduledMethod method = scheduledMethod(task);
		if (method == null) {
			return null;
		}
		OnlyOnLeader annotation = OnlyOnLeaderPointcut.find(method.method(), method.type());
		if (annotation == null) {
			return null;
		}
		String group = annotation.group().isEmpty() ? this.defaultGroup.get() : annotation.group();
		LeaderElectionRegistry elections = this.registry.get();
		LeaderElection election = elections.find(group).orElseGet(() -> elections.join(group));
		String name = method.beanName() + "." + method.method().getName();
		LeaderOnlyJob job;
		try {
			job = new LeaderOnlyJob(election, name, schedule,
					MissedTickPolicies.resolve(annotation, this.defaults.get()));
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException(ex.getMessage() + ". Use a store that keeps them, or set "
					+ "leader-election.jobs.run-records=false to run " + method.description()
					+ " without them (a tick may then run twice across a hand-over, or be lost)", ex);
		}
		if (this.probedGroups.add(group)) {
			readOnce(job, method.description());
		}
		ScheduledJob scheduled = new ScheduledJob(job, method.description(), method.method().getName(), task, scheduler,
				scheduler.getClock(), this.observations.get());
		synchronized (this) {
			this.jobs.add(scheduled);
			this.watchers.forEach((watcher) -> watcher.accept(scheduled));
		}
		logger.debug("Scheduled {}", scheduled);
		if (election.isLeader()) {
			scheduled.catchUpSoon();
		}
		return scheduled;
	}

	/**
	 * Reads a job's last run once at startup: a store that cannot keep the group's run
	 * records as configured (a JDBC table missing) fails startup now, rather than every
	 * tick of every leader-only method later; a store that does not answer now may later.
	 */
	private static void readOnce(LeaderOnlyJob job, String method) {
		try {
			job.lastRun();
		}
		catch (LeaderElectionException ex) {
			if (ex.getCause() instanceof IllegalStateException misconfigured) {
				throw new IllegalStateException("Cannot record the runs of " + method + " in group '" + job.group()
						+ "': " + misconfigured.getMessage()
						+ "\nOr set leader-election.jobs.run-records=false to run scheduled leader-only methods "
						+ "without run records (a tick may then run twice across a hand-over, or be lost)", ex);
			}
			logger.warn(
					"Could not read the run records of group '{}' at startup, so whether its scheduled leader-only "
							+ "methods missed ticks is known only once the store answers: {}",
					job.group(), ex.getMessage());
		}
	}

	@Override
	public void granted(Leadership leadership) {
		for (ScheduledJob job : this.jobs) {
			if (job.job().group().equals(leadership.group())) {
				job.catchUpSoon();
			}
		}
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
	}

	private @Nullable ScheduledMethod scheduledMethod(Runnable task) {
		if (task.getClass().getName().endsWith(OUTCOME_TRACKING_TASK)) {
			Runnable wrapped = wrappedTask(task);
			return (wrapped != null) ? scheduledMethod(wrapped) : null;
		}
		if (task instanceof ScheduledMethodRunnable runnable) {
			Object target = runnable.getTarget();
			Class<?> type = ClassUtils.getUserClass(AopUtils.getTargetClass(target));
			return new ScheduledMethod(runnable.getMethod(), type, beanName(target, type));
		}
		if (task.getClass().getName().endsWith(SUBSCRIBING_TASK)) {
			return reactiveMethod(task.toString());
		}
		return null;
	}

	private static @Nullable Runnable wrappedTask(Runnable task) {
		Field field = ReflectionUtils.findField(task.getClass(), "runnable", Runnable.class);
		if (field == null) {
			logger.warn(
					"Cannot find the task Spring wrapped in {}: the scheduled leader-only methods of this "
							+ "application claim no ticks, so a tick may run twice across a hand-over",
					task.getClass());
			return null;
		}
		ReflectionUtils.makeAccessible(field);
		return (Runnable) ReflectionUtils.getField(field, task);
	}

	/**
	 * The method of a reactive task, which Spring names
	 * {@code <the bean's class name>.<method name>}: the bean is the proxy, whose class
	 * name starts with the class it proxies.
	 */
	private @Nullable ScheduledMethod reactiveMethod(String displayName) {
		int dot = displayName.lastIndexOf('.');
		int proxySuffix = displayName.indexOf("$$");
		String className = displayName.substring(0, (proxySuffix > 0 && proxySuffix < dot) ? proxySuffix : dot);
		String methodName = displayName.substring(dot + 1);
		Class<?> type;
		try {
			type = ClassUtils.forName(className, this.beanFactory.getBeanClassLoader());
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return null;
		}
		Method method = methodNamed(type, methodName);
		if (method == null) {
			return null;
		}
		String[] names = this.beanFactory.getBeanNamesForType(type, false, false);
		if (names.length != 1) {
			if (OnlyOnLeaderPointcut.find(method, type) != null) {
				logger.warn(
						"{}.{}() is a reactive scheduled leader-only method of {} beans, which Spring does not "
								+ "tell apart: its ticks are not claimed, so a tick may run twice across a hand-over",
						type.getSimpleName(), methodName, names.length);
			}
			return null;
		}
		return new ScheduledMethod(method, type, names[0]);
	}

	/**
	 * The method Spring schedules under that name: one without parameters, or a Kotlin
	 * suspending function, whose only parameter is its continuation.
	 */
	private static @Nullable Method methodNamed(Class<?> type, String name) {
		Method method = ClassUtils.getMethodIfAvailable(type, name);
		if (method != null) {
			return method;
		}
		for (Method candidate : type.getMethods()) {
			if (candidate.getName().equals(name) && candidate.getParameterCount() == 1
					&& KotlinDetector.isSuspendingFunction(candidate)) {
				return candidate;
			}
		}
		return null;
	}

	private String beanName(Object bean, Class<?> type) {
		for (String name : this.beanFactory.getBeanNamesForType(type, false, false)) {
			if (this.beanFactory.containsSingleton(name) && this.beanFactory.getSingleton(name) == bean) {
				return name;
			}
		}
		return type.getSimpleName();
	}

	/** A scheduled method, the class of the bean it is called on, and the bean's name. */
	private record ScheduledMethod(Method method, Class<?> type, String beanName) {

		String description() {
			return this.type.getSimpleName() + "." + this.method.getName() + "()";
		}

	}

}
