package io.github.leaderelection.actuate;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Refuses, with 413, a request body to the {@code leaderelection} endpoint larger than a
 * small limit, before it is parsed: its write operations take a few short values, and a
 * body of megabytes would otherwise be read into memory whole. A body without a declared
 * length is read up to the limit, no further.
 */
class RequestSizeLimitFilter implements Filter {

	private final Supplier<@Nullable String> endpointPath;

	private final long maxBytes;

	/**
	 * Creates a filter.
	 * @param endpointPath the endpoint's path within the application, such as
	 * {@code /actuator/leaderelection}, or null while unknown
	 * @param maxBytes the largest body accepted
	 */
	RequestSizeLimitFilter(Supplier<@Nullable String> endpointPath, long maxBytes) {
		this.endpointPath = endpointPath;
		this.maxBytes = maxBytes;
	}

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		if (!(request instanceof HttpServletRequest http) || !(response instanceof HttpServletResponse httpResponse)
				|| "GET".equals(http.getMethod()) || !isEndpoint(http)) {
			chain.doFilter(request, response);
			return;
		}
		long declared = http.getContentLengthLong();
		if (declared > this.maxBytes) {
			refuse(httpResponse, declared + " bytes");
			return;
		}
		byte[] body = http.getInputStream().readNBytes((int) Math.min(Integer.MAX_VALUE - 1, this.maxBytes + 1));
		if (body.length > this.maxBytes) {
			refuse(httpResponse, "more");
			return;
		}
		chain.doFilter(new ReadBody(http, body), response);
	}

	private boolean isEndpoint(HttpServletRequest request) {
		String path = this.endpointPath.get();
		if (path == null) {
			return false;
		}
		String uri = request.getRequestURI().substring(request.getContextPath().length());
		return uri.equals(path) || uri.startsWith(path + "/");
	}

	private void refuse(HttpServletResponse response, String size) throws IOException {
		response.setStatus(413);
		response.setContentType("application/json");
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.getWriter()
			.write("{\"status\":413,\"error\":\"payload-too-large\",\"message\":\"The leaderelection endpoint accepts "
					+ "request bodies of at most " + this.maxBytes
					+ " bytes (leader-election.endpoint.max-request-size)" + "; this one has " + size
					+ "\",\"mayStillTakeEffect\":false}");
	}

	/** The request with its body already read. */
	private static final class ReadBody extends HttpServletRequestWrapper {

		private final byte[] body;

		ReadBody(HttpServletRequest request, byte[] body) {
			super(request);
			this.body = body;
		}

		@Override
		public int getContentLength() {
			return this.body.length;
		}

		@Override
		public long getContentLengthLong() {
			return this.body.length;
		}

		@Override
		public ServletInputStream getInputStream() {
			InputStream bytes = new ByteArrayInputStream(this.body);
			return new ServletInputStream() {

				@Override
				public int read() throws IOException {
					return bytes.read();
				}

				@Override
				public int read(byte[] buffer, int offset, int length) throws IOException {
					return bytes.read(buffer, offset, length);
				}

				@Override
				public boolean isFinished() {
					try {
						return bytes.available() == 0;
					}
					catch (IOException ex) {
						return true;
					}
				}

				@Override
				public boolean isReady() {
					return true;
				}

				@Override
				public void setReadListener(ReadListener listener) {
					throw new UnsupportedOperationException("The body has been read already");
				}

			};
		}

	}

}
