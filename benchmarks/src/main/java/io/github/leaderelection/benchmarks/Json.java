package io.github.leaderelection.benchmarks;

import java.util.Collection;
import java.util.Map;

/**
 * Writes maps, lists, strings, numbers and booleans as JSON, for results.json.
 */
final class Json {

	private Json() {
	}

	static String write(Object value) {
		StringBuilder out = new StringBuilder();
		write(value, out, "");
		return out.append('\n').toString();
	}

	private static void write(Object value, StringBuilder out, String indent) {
		if (value == null) {
			out.append("null");
		}
		else if (value instanceof Map<?, ?> map) {
			if (map.isEmpty()) {
				out.append("{}");
				return;
			}
			out.append("{\n");
			String inner = indent + "  ";
			int i = 0;
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				out.append(inner);
				string(String.valueOf(entry.getKey()), out);
				out.append(": ");
				write(entry.getValue(), out, inner);
				out.append((++i < map.size()) ? ",\n" : "\n");
			}
			out.append(indent).append('}');
		}
		else if (value instanceof Collection<?> list) {
			boolean simple = list.stream().allMatch((item) -> item instanceof Number || item instanceof String);
			if (simple) {
				out.append('[');
				int i = 0;
				for (Object item : list) {
					write(item, out, indent);
					if (++i < list.size()) {
						out.append(", ");
					}
				}
				out.append(']');
				return;
			}
			out.append("[\n");
			String inner = indent + "  ";
			int i = 0;
			for (Object item : list) {
				out.append(inner);
				write(item, out, inner);
				out.append((++i < list.size()) ? ",\n" : "\n");
			}
			out.append(indent).append(']');
		}
		else if (value instanceof Double d) {
			out.append((d.isNaN() || d.isInfinite()) ? "null" : String.format(java.util.Locale.ROOT, "%.3f", d));
		}
		else if (value instanceof Number || value instanceof Boolean) {
			out.append(value);
		}
		else {
			string(value.toString(), out);
		}
	}

	private static void string(String value, StringBuilder out) {
		out.append('"');
		for (char c : value.toCharArray()) {
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				case '\r' -> out.append("\\r");
				case '\t' -> out.append("\\t");
				default -> {
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		out.append('"');
	}

}
