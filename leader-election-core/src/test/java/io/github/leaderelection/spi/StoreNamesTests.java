package io.github.leaderelection.spi;

import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class StoreNamesTests {

	private static final Pattern RULE = Pattern.compile("^[a-z]+(/[a-z]+)*$");

	@Test
	void aValueThatMatchesIsReturned() {
		assertThat(StoreNames.requireMatching("base path", "apps/orders", RULE)).isEqualTo("apps/orders");
		assertThat(StoreNames.requireMatching("namespace", "abc", RULE, 3)).isEqualTo("abc");
	}

	@Test
	void aValueThatDoesNotMatchIsRefusedNamingItAndTheRule() {
		assertThatIllegalArgumentException().isThrownBy(() -> StoreNames.requireMatching("base path", "a b", RULE))
			.withMessage("Invalid base path 'a b': it must match ^[a-z]+(/[a-z]+)*$");
	}

	@Test
	void aValueTooLongOrNotMatchingIsRefusedNamingTheLengthToo() {
		String tooLong = "abcd";
		for (String invalid : new String[] { tooLong, "A" }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> StoreNames.requireMatching("etcd namespace", invalid, RULE, 3))
				.withMessage("Invalid etcd namespace '" + invalid
						+ "': it must match ^[a-z]+(/[a-z]+)*$ and have at most 3 characters");
		}
	}

	@Test
	void aMissingValueIsRefusedNamingWhatIsMissing() {
		assertThatNullPointerException().isThrownBy(() -> StoreNames.requireMatching("key prefix", null, RULE))
			.withMessage("key prefix");
		assertThatNullPointerException().isThrownBy(() -> StoreNames.requireMatching("key prefix", null, RULE, 3))
			.withMessage("key prefix");
	}

	@Test
	void aRuleOfTheStoresOwnIsWordedTheSameWay() {
		assertThat(StoreNames.invalid("base path", "/zookeeper", "/zookeeper is ZooKeeper's own"))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessage("Invalid base path '/zookeeper': /zookeeper is ZooKeeper's own");
	}

}
