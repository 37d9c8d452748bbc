package io.bulkhead.httpclient;

import io.bulkhead.internal.Urls;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Comparator;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Which outgoing requests belong to an upstream: a base URL ({@code https://llm.internal:8443/v1})
 * matches requests to the same scheme, host and port whose path is the base path or below it; a
 * host alone ({@code llm.internal}, or {@code llm.internal:8443}) matches any scheme and path on
 * it. Every client edge routes with it: {@link UpstreamRoutes}, and the Spring Boot starter's
 * {@code bulkhead.compartments.<name>.upstream}.
 *
 * @param scheme lower case; null when any scheme matches
 * @param host lower case
 * @param port the port, or -1 for the scheme's default (any port when the scheme is null too)
 * @param path the base path without a trailing slash; empty for the whole host
 */
public record BaseUrl(@Nullable String scheme, String host, int port, String path) {

  /** The most specific first: the longest base path, then the order of the list. */
  public static final Comparator<BaseUrl> MOST_SPECIFIC_FIRST =
      Comparator.comparingInt((BaseUrl url) -> url.path().length()).reversed();

  private static final int HTTP_PORT = 80;
  private static final int HTTPS_PORT = 443;

  /**
   * Parses a base URL or a host, as a route or a {@code bulkhead.compartments.<name>.upstream}
   * value gives it.
   *
   * @throws IllegalArgumentException saying what is wrong with {@code value}
   */
  public static BaseUrl parse(String value) {
    String trimmed = value.trim();
    boolean hostOnly = !trimmed.contains("://");
    URI uri;
    try {
      uri = new URI(hostOnly ? "//" + trimmed : trimmed);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a URL or host name (" + e.getReason() + ")");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException(
          "names no host: give a base URL (https://llm.internal:8443/v1) or a host (llm.internal)");
    }
    if (hostOnly && uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
      throw new IllegalArgumentException(
          "has a path but no scheme: give a base URL with its scheme"
              + " ("
              + Urls.masked("https://" + trimmed)
              + ") or the host alone");
    }
    String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
    if (scheme != null && !scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("scheme must be http or https but was " + scheme);
    }
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    while (path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    int port = uri.getPort() == -1 && scheme != null ? defaultPort(scheme) : uri.getPort();
    return new BaseUrl(scheme, uri.getHost().toLowerCase(Locale.ROOT), port, path);
  }

  /** Whether a request to {@code uri} goes to this upstream. */
  public boolean matches(URI uri) {
    String requestScheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (scheme != null && !scheme.equals(requestScheme)) {
      return false;
    }
    if (uri.getHost() == null || !host.equals(uri.getHost().toLowerCase(Locale.ROOT))) {
      return false;
    }
    if (port != -1) {
      int requestPort = uri.getPort() == -1 ? defaultPort(requestScheme) : uri.getPort();
      if (port != requestPort) {
        return false;
      }
    }
    String requestPath = uri.getRawPath() == null ? "" : uri.getRawPath();
    return path.isEmpty() || requestPath.equals(path) || requestPath.startsWith(path + "/");
  }

  private static int defaultPort(String scheme) {
    return scheme.equals("https") ? HTTPS_PORT : HTTP_PORT;
  }
}
