package io.github.leaderelection.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link and anchor in the README, CONTRIBUTING, CHANGELOG and the pages
 * under docs/ resolves: the file exists and, for an anchor, so does a heading that GitHub
 * would give that anchor.
 */
class DocumentationLinksTests {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

	private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");

	@Test
	void everyRelativeLinkAndAnchorResolves() throws IOException {
		List<String> broken = new ArrayList<>();
		for (Path page : pages()) {
			List<String> lines = Files.readAllLines(page);
			boolean inFence = false;
			for (int i = 0; i < lines.size(); i++) {
				String line = lines.get(i);
				if (line.stripLeading().startsWith("```")) {
					inFence = !inFence;
					continue;
				}
				if (inFence) {
					continue;
				}
				Matcher link = LINK.matcher(withoutInlineCode(line));
				while (link.find()) {
					String problem = problem(page, link.group(1));
					if (problem != null) {
						broken.add(ROOT.relativize(page) + ":" + (i + 1) + ": " + link.group(1) + " (" + problem + ")");
					}
				}
			}
		}
		assertThat(broken).as("broken links").isEmpty();
	}

	@Test
	void anchorsAreMadeAsGitHubMakesThem() {
		assertThat(anchors(
				List.of("## Guarantees and non-guarantees", "## @OnlyOnLeader", "### 1. Gate cost (JMH, ns per call)",
						"## Many groups, balancing and partitions", "## Tests", "## Tests")))
			.containsExactly("guarantees-and-non-guarantees", "onlyonleader", "1-gate-cost-jmh-ns-per-call",
					"many-groups-balancing-and-partitions", "tests", "tests-1");
	}

	private static String problem(Path page, String target) {
		if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
			return null; // http:, https:, mailto: and the like
		}
		int hash = target.indexOf('#');
		String file = (hash >= 0) ? target.substring(0, hash) : target;
		String anchor = (hash >= 0) ? target.substring(hash + 1) : null;
		Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
		if (!Files.exists(resolved)) {
			return "no such file";
		}
		if (anchor == null || anchor.isEmpty() || !resolved.toString().endsWith(".md")) {
			return null;
		}
		try {
			return anchors(Files.readAllLines(resolved)).contains(anchor) ? null : "no such anchor";
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Set<String> anchors(List<String> lines) {
		Set<String> anchors = new LinkedHashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		boolean inFence = false;
		for (String line : lines) {
			if (line.stripLeading().startsWith("```")) {
				inFence = !inFence;
				continue;
			}
			if (inFence) {
				continue;
			}
			Matcher html = HTML_ANCHOR.matcher(line);
			while (html.find()) {
				anchors.add(html.group(1));
			}
			Matcher heading = HEADING.matcher(line);
			if (heading.matches()) {
				String slug = slug(heading.group(1));
				int count = seen.merge(slug, 1, Integer::sum);
				anchors.add((count == 1) ? slug : slug + "-" + (count - 1));
			}
		}
		return anchors;
	}

	/**
	 * GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
	 */
	private static String slug(String heading) {
		String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "");
		return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "").replace(' ', '-');
	}

	private static String withoutInlineCode(String line) {
		return line.replaceAll("`[^`]*`", "``");
	}

	private static List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>();
		for (String name : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
			pages.add(ROOT.resolve(name));
		}
		try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

}
