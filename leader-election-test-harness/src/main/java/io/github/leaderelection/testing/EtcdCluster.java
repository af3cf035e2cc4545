package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
