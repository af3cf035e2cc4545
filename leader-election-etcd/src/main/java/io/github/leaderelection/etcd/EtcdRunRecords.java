package io.github.leaderelection.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;

/**
 * The run records of an {@link EtcdLeaseStore}: one key per group and job,
 * {@code <namespace>/runs/<group>/<job>}, whose value is the job's last run. A claim
 * reads the group's record, its lease key and the run key at one revision, then writes
 * the run in a transaction compared on all three: it commits only while the record names
 * the holder in its term on the holder's etcd lease, that lease's key still lives (etcd
 * deletes it when the etcd lease expires), and nobody wrote the run since. A group's runs
 * are listed with one range read of {@code <namespace>/runs/<group>/}: the '/' after the
 * group keeps out the runs of a group whose name starts with this one's.
 */
final class EtcdRunRecords {

	private static final GetOption PREFIX = GetOption.builder().isPrefix(true).build();

	private final KV kv;

	private final String namespace;

	EtcdRunRecords(KV kv, String namespace) {
		this.kv = kv;
		this.namespace = namespace;
	}

	Optional<RunRecord> read(EtcdCall call, String group, String job) {
		return call.await(this.kv.get(runKey(group, job)))
			.getKvs()
			.stream()
			.findFirst()
			.map((value) -> parse(group, job, value));
	}

	/**
	 * Reads the run of every job of the group.
	 * @return the runs in job-name order
	 */
	List<RunRecord> list(EtcdCall call, String group) {
		String prefix = runPrefix(group);
		List<RunRecord> runs = new ArrayList<>();
		for (KeyValue value : call.await(this.kv.get(EtcdLeaseStore.bytes(prefix), PREFIX)).getKvs()) {
			String job = value.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
			runs.add(parse(group, URLDecoder.decode(job, StandardCharsets.UTF_8), value));
		}
		// etcd orders by the encoded keys, which is not the names' order.
		runs.sort(Comparator.comparing(RunRecord::job));
		return runs;
	}

	boolean claim(EtcdCall call, Lease lease, RunRecord run, Duration minInterval) {
		String group = lease.group();
		ByteSequence record = EtcdLeaseStore.groupKey(this.namespace, group, "record");
		ByteSequence leaseKey = EtcdLeaseStore.groupKey(this.namespace, group, "lease");
		ByteSequence runKey = runKey(group, run.job());
		List<GetResponse> read = call
			.await(this.kv.txn()
				.Then(Op.get(record, GetOption.DEFAULT), Op.get(leaseKey, GetOption.DEFAULT),
						Op.get(runKey, GetOption.DEFAULT))
				.commit())
			.getGetResponses();
		Optional<KeyValue> recordValue = read.get(0).getKvs().stream().findFirst();
		Optional<KeyValue> leaseValue = read.get(1).getKvs().stream().findFirst();
		Optional<KeyValue> runValue = read.get(2).getKvs().stream().findFirst();
		if (recordValue.isEmpty() || leaseValue.isEmpty()) {
			return false;
		}
		GroupRecord current = GroupRecord.decode(recordValue.get());
		if (!current.isHeldBy(lease) || leaseValue.get().getLease() != current.leaseId()) {
			return false;
		}
		Optional<RunRecord> last = runValue.map((value) -> parse(group, run.job(), value));
		if (!run.mayFollow(last.orElse(null), minInterval)) {
			return false;
		}
		Cmp runUnchanged = runValue
			.map((value) -> new Cmp(runKey, Cmp.Op.EQUAL, CmpTarget.modRevision(value.getModRevision())))
			.orElseGet(() -> new Cmp(runKey, Cmp.Op.EQUAL, CmpTarget.version(0)));
		TxnResponse written = call.await(this.kv.txn()
			.If(new Cmp(record, Cmp.Op.EQUAL, CmpTarget.modRevision(recordValue.get().getModRevision())),
					new Cmp(leaseKey, Cmp.Op.EQUAL, CmpTarget.modRevision(leaseValue.get().getModRevision())),
					runUnchanged)
			.Then(Op.put(runKey, bytes(run), PutOption.DEFAULT))
			.commit());
		return written.isSucceeded();
	}

	boolean finish(EtcdCall call, RunRecord ended) {
		Objects.requireNonNull(ended.ended(), "ended");
		ByteSequence runKey = runKey(ended.group(), ended.job());
		Optional<KeyValue> runValue = call.await(this.kv.get(runKey)).getKvs().stream().findFirst();
		if (runValue.isEmpty() || !parse(ended.group(), ended.job(), runValue.get()).isSameRunAs(ended)) {
			return false;
		}
		return call
			.await(this.kv.txn()
				.If(new Cmp(runKey, Cmp.Op.EQUAL, CmpTarget.modRevision(runValue.get().getModRevision())))
				.Then(Op.put(runKey, bytes(ended), PutOption.DEFAULT))
				.commit())
			.isSucceeded();
	}

	/**
	 * Outside the group's keys, which reads and watches of the group take by their
	 * prefix: a run written must neither lengthen a read nor wake a watcher.
	 */
	private ByteSequence runKey(String group, String job) {
		return EtcdLeaseStore.bytes(runPrefix(group) + EtcdLeaseStore.encode(job));
	}

	/** The start of the keys of the group's runs, up to and with the '/' before a job. */
	private String runPrefix(String group) {
		return this.namespace + "/runs/" + EtcdLeaseStore.encode(group) + "/";
	}

	/**
	 * The run as {@code tick term started ended outcome holder}, {@code ~} for an end not
	 * yet written, the holder URL-encoded.
	 */
	private static ByteSequence bytes(RunRecord run) {
		String ended = (run.ended() != null) ? Long.toString(run.ended().toEpochMilli()) : "~";
		return EtcdLeaseStore.bytes(run.tick() + " " + run.term() + " " + run.started().toEpochMilli() + " " + ended
				+ " " + run.outcome().name() + " " + EtcdLeaseStore.encode(run.holder()));
	}

	private static RunRecord parse(String group, String job, KeyValue value) {
		String[] fields = value.getValue().toString(StandardCharsets.UTF_8).split(" ");
		Instant ended = "~".equals(fields[3]) ? null : Instant.ofEpochMilli(Long.parseLong(fields[3]));
		return new RunRecord(group, job, Long.parseLong(fields[0]),
				URLDecoder.decode(fields[5], StandardCharsets.UTF_8), Long.parseLong(fields[1]),
				Instant.ofEpochMilli(Long.parseLong(fields[2])), ended, RunOutcome.valueOf(fields[4]));
	}

}
