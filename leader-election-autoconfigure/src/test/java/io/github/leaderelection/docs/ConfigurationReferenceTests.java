package io.github.leaderelection.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The property reference in docs/configuration.md is the configuration metadata that the
 * build generates from the properties' Javadoc: every {@code leader-election.*} property
 * and the endpoint's own, with type, default and description. When a property changes,
 * the page is written anew by running this test with {@code -Dreference.update=true}.
 */
class ConfigurationReferenceTests {

	private static final Path PAGE = Path.of("../docs/configuration.md");

	private static final Path METADATA = Path.of("target/classes/META-INF/spring-configuration-metadata.json");

	private static final String START = "<!-- properties:start (written by ConfigurationReferenceTests) -->";

	private static final String END = "<!-- properties:end -->";

	@Test
	void pageListsEveryPropertyOfTheMetadataWithItsTypeDefaultAndDescription() throws IOException {
		String page = Files.readString(PAGE);
		int start = page.indexOf(START);
		int end = page.indexOf(END);
		assertThat(start).as("the marker %s in %s", START, PAGE).isNotNegative();
		assertThat(end).as("the marker %s in %s", END, PAGE).isGreaterThan(start);
		String expected = START + "\n\n" + table() + "\n" + END;
		String actual = page.substring(start, end + END.length());
		if (!actual.equals(expected) && Boolean.getBoolean("reference.update")) {
			Files.writeString(PAGE, page.substring(0, start) + expected + page.substring(end + END.length()));
			return;
		}
		assertThat(actual)
			.as("The property table of docs/configuration.md differs from the configuration metadata. Write it "
					+ "anew with: ./mvnw -pl leader-election-autoconfigure test -Dtest=ConfigurationReferenceTests "
					+ "-Dreference.update=true")
			.isEqualTo(expected);
	}

	@Test
	void everyPropertyHasADescription() throws IOException {
		assertThat(properties()).allSatisfy(
				(property) -> assertThat(property.get("description")).as("description of %s", property.get("name"))
					.isNotNull());
	}

	private static String table() throws IOException {
		StringBuilder table = new StringBuilder("| property | type | default | description |\n|---|---|---|---|\n");
		for (Map<String, Object> property : properties()) {
			Object defaultValue = property.get("defaultValue");
			table.append("| `")
				.append(property.get("name"))
				.append("` | ")
				.append(cell(simpleType((String) property.get("type"))))
				.append(" | ")
				.append((defaultValue != null) ? "`" + format(defaultValue) + "`" : "")
				.append(" | ")
				.append(cell(String.valueOf(property.getOrDefault("description", ""))))
				.append(" |\n");
		}
		return table.toString();
	}

	private static List<Map<String, Object>> properties() throws IOException {
		List<Map<String, Object>> properties = JsonPath.parse(Files.readString(METADATA)).read("$.properties");
		return properties.stream()
			.filter((property) -> isOurs((String) property.get("name")))
			.sorted(Comparator.comparing((property) -> (String) property.get("name")))
			.toList();
	}

	private static boolean isOurs(String name) {
		return name.startsWith("leader-election.") || name.startsWith("management.endpoint.leaderelection.")
				|| name.startsWith("management.health.leaderelection.");
	}

	private static String format(Object value) {
		if (value instanceof List<?> list) {
			return list.stream().map(String::valueOf).collect(Collectors.joining(","));
		}
		return String.valueOf(value);
	}

	/**
	 * {@code java.util.Map<java.lang.String,java.lang.Integer>} reads
	 * {@code Map<String,Integer>}.
	 */
	private static String simpleType(String type) {
		return (type != null) ? type.replaceAll("[a-z][a-z0-9_]*\\.", "").replace('$', '.') : "";
	}

	private static String cell(String text) {
		return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;");
	}

}
