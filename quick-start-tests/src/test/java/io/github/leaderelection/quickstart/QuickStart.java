package io.github.leaderelection.quickstart;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The README's Quick start section: its marked blocks and the artifacts its store table
 * names.
 */
final class QuickStart {

	// A marker, then (after blank lines at most) the fenced block it marks.
	private static final Pattern MARKED_BLOCK = Pattern.compile(
			"<!-- quick-start:([a-z0-9:-]+) -->\\n(?:[ \\t]*\\n)*([ \\t]*)```[a-z]*\\n(.*?)\\n[ \\t]*```",
			Pattern.DOTALL);

	private final String section;

	private final Map<String, String> blocks = new LinkedHashMap<>();

	private QuickStart(String section) {
		this.section = section;
		Matcher matcher = MARKED_BLOCK.matcher(section);
		while (matcher.find()) {
			String previous = this.blocks.put(matcher.group(1), unindent(matcher.group(3), matcher.group(2)));
			if (previous != null) {
				throw new IllegalStateException("README marks two blocks quick-start:" + matcher.group(1));
			}
		}
	}

	static QuickStart read(Path readme) throws IOException {
		String text = Files.readString(readme).replace("\r\n", "\n");
		int start = text.indexOf("\n## Quick start\n");
		if (start < 0) {
			throw new IllegalStateException(readme + " has no \"## Quick start\" section");
		}
		int end = text.indexOf("\n## ", start + 1);
		return new QuickStart(text.substring(start, (end < 0) ? text.length() : end));
	}

	/**
	 * The block marked {@code <!-- quick-start:name -->}.
	 * @param name the marker's name, such as {@code java} or {@code application-yml:h2}
	 * @return the block's text, without the list item's indentation
	 */
	String block(String name) {
		String block = this.blocks.get(name);
		if (block == null) {
			throw new IllegalStateException("README's Quick start has no block marked <!-- quick-start:" + name
					+ " --> (it has " + this.blocks.keySet() + ")");
		}
		return block;
	}

	/**
	 * The artifacts that the store table's row names in its "add" column:
	 * {@code group:artifact}, or a bare artifact id for Spring Boot's starters.
	 * @param label how the row begins, such as {@code H2}
	 * @return the artifact ids
	 */
	List<String> artifactsOfRow(String label) {
		for (String line : this.section.split("\n")) {
			String row = line.strip();
			if (row.startsWith("| " + label)) {
				String add = row.split("\\|")[2];
				// The first artifact of each alternative in parentheses is the one the
				// test runs.
				add = add.replaceAll("\\(or [^)]*\\)", "");
				List<String> artifacts = new ArrayList<>();
				Matcher code = Pattern.compile("`([^`]+)`").matcher(add);
				while (code.find()) {
					String coordinates = code.group(1);
					artifacts.add(coordinates.substring(coordinates.indexOf(':') + 1));
				}
				return artifacts;
			}
		}
		throw new IllegalStateException("README's Quick start has no store table row for " + label);
	}

	private static String unindent(String block, String indentation) {
		StringBuilder result = new StringBuilder();
		for (String line : block.split("\n", -1)) {
			result.append(line.startsWith(indentation) ? line.substring(indentation.length()) : line.strip())
				.append('\n');
		}
		return result.toString();
	}

}
