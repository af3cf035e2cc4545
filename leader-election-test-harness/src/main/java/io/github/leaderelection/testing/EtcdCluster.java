package io.github.leaderelection.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A cluster of etcd members that a test runs itself on spare ports, each a process it can
 * kill, restart or cut off (through a {@link TcpProxy} in front of a member's client
 * port). {@link #close()} leaves no process behind.
 */
public final class EtcdCluster implements AutoCloseable {

	private final List<EtcdServer> members = new ArrayList<>();

	public EtcdCluster(Path directory, int size) throws Exception {
		for (int i = 0; i < size; i++) {
			this.members.add(new EtcdServer(directory.resolve("member-" + i), "member-" + i));
		}
		String initialCluster = this.members.stream()
			.map((member) -> member.name() + "=" + member.peerUrl())
			.collect(Collectors.joining(","));
		this.members.forEach((member) -> member.initialCluster(initialCluster, "new"));
	}

	/** Starts every member, and returns once each answers (a quorum runs). */
	public void start() throws Exception {
		for (EtcdServer member : this.members) {
			member.launch();
		}
		for (EtcdServer member : this.members) {
			member.awaitReady();
		}
	}

	public EtcdServer member(int index) {
		return this.members.get(index);
	}

	public List<EtcdServer> members() {
		return List.copyOf(this.members);
	}

	/** Every member's client URL. */
	public String[] endpoints() {
		return this.members.stream().map(EtcdServer::endpoint).toArray(String[]::new);
	}

	/**
	 * Replaces a member by one on an empty data directory, as after a lost disk: the
	 * member is stopped, removed from the cluster, added back under its name and address,
	 * and started on nothing, to catch up from the others (etcd's runtime
	 * reconfiguration; a member cannot simply restart on an empty directory).
	 */
	public void replaceWithEmptyMember(int index) throws Exception {
		EtcdServer member = this.members.get(index);
		member.stop(true);
		EtcdServer other = this.members.stream()
			.filter((candidate) -> candidate != member && candidate.answers())
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No member of the cluster answers"));
		String memberId = other.memberId(member.peerUrl());
		other.post("/v3/cluster/member/remove", "{\"ID\":\"" + memberId + "\"}");
		// etcd refuses to add a member (503) until it judges the remaining ones healthy.
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (true) {
			try {
				other.post("/v3/cluster/member/add", "{\"peerURLs\":[\"" + member.peerUrl() + "\"]}");
				break;
			}
			catch (IOException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw ex;
				}
				Thread.sleep(250);
			}
		}
		member.wipe();
		String initialCluster = this.members.stream()
			.map((candidate) -> candidate.name() + "=" + candidate.peerUrl())
			.collect(Collectors.joining(","));
		member.initialCluster(initialCluster, "existing");
		member.restart();
	}

	/** The index of the member that is the Raft leader now, or -1 if none says so. */
	public int raftLeader() {
		for (int i = 0; i < this.members.size(); i++) {
			if (this.members.get(i).answers() && this.members.get(i).isRaftLeader()) {
				return i;
			}
		}
		return -1;
	}

	@Override
	public void close() throws Exception {
		Exception failure = null;
		for (EtcdServer member : this.members) {
			try {
				member.close();
			}
			catch (Exception ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

}
