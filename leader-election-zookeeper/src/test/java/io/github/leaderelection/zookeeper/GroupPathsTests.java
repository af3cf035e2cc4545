package io.github.leaderelection.zookeeper;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class GroupPathsTests {

	@Test
	void encodesAnyGroupNameAsOnePathSegment() {
		assertThat(GroupPaths.encode("orders-2_b")).isEqualTo("orders-2_b");
		assertThat(GroupPaths.encode("a/b")).isEqualTo("a%2Fb");
		assertThat(GroupPaths.encode("..")).isEqualTo("%2E%2E");
		assertThat(GroupPaths.encode("zookeeper")).isEqualTo("zookeeper");
		assertThat(GroupPaths.encode("é %")).isEqualTo("%C3%A9%20%25");
	}

	@Test
	void namesEachGroupOneNodeUnderTheBasePathAndItsQueueNodesBelowIt() {
		GroupPaths paths = new GroupPaths("/leader-election");
		assertThat(paths.group("a/b")).isEqualTo("/leader-election/a%2Fb");
		assertThat(paths.node("a/b", "_c_1-lease-0000000007"))
			.isEqualTo("/leader-election/a%2Fb/_c_1-lease-0000000007");
		assertThat(GroupPaths.isQueueNode("_c_1-lease-0000000007")).isTrue();
		assertThat(GroupPaths.isQueueNode("lease-7")).isFalse();
	}

	@Test
	void decodesExactlyTheSegmentsThatEncodeGives() {
		for (String name : new String[] { "orders-2_b", "a/b", "..", "é %", "", "candidate@1", "😀" }) {
			assertThat(GroupPaths.decode(GroupPaths.encode(name))).isEqualTo(name);
		}
		assertThat(GroupPaths.decode("%41")).as("'A' encodes to itself").isNull();
		assertThat(GroupPaths.decode("%e9")).as("lower-case hex").isNull();
		assertThat(GroupPaths.decode("a%2")).isNull();
		assertThat(GroupPaths.decode("a.b")).isNull();
		assertThat(GroupPaths.decode("%C3")).as("not UTF-8").isNull();
	}

	@Test
	void listsTheLiveCandidatesUnderANodeThatNoGroupHas() {
		GroupPaths paths = new GroupPaths("/leader-election");
		assertThat(paths.candidates()).isEqualTo("/leader-election/.candidates");
		assertThat(paths.candidate("a%2Fb@3")).isEqualTo("/leader-election/.candidates/a%2Fb@3");
		assertThat(paths.group(".candidates")).isNotEqualTo(paths.candidates());
		assertThat(paths.group("candidates")).isNotEqualTo(paths.candidates());
	}

}
