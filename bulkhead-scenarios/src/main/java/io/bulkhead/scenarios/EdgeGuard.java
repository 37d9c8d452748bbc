package io.bulkhead.scenarios;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.http.pathmap.ServletPathSpec;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The outermost handler of a demo server. Every response says {@code X-Content-Type-Options:
 * nosniff} (a browser must not run a text answer as a script). The admin routes ({@code
 * /bulkheads}, {@code /metrics}, {@code /dashboard}) answer only a request whose {@code Host} names
 * this server by a loopback name ({@code localhost}, {@code 127.0.0.1}, {@code [::1]}) with the
 * port it listens on, or a host allowed explicitly; any other gets a one-line {@code 403}. The
 * server listens on loopback only, but a page from another site can rebind its own name to
 * 127.0.0.1 (DNS rebinding) and read the routes as same-origin: its requests still carry its own
 * name in {@code Host}.
 */
final class EdgeGuard extends Handler.Wrapper {

  /**
   * Built and encoded once: this header goes on every answer, /login included, and a field made
   * from two strings per request would be built and encoded per request.
   */
  private static final HttpField NOSNIFF =
      new PreEncodedHttpField("X-Content-Type-Options", "nosniff");

  private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "[::1]");

  private final List<ServletPathSpec> adminPaths;
  private final Set<String> allowedHosts;

  /**
   * @param adminPaths the servlet path specs of the admin routes
   * @param allowedHosts more names the admin routes answer to, lower case, each with a port ({@code
   *     name:port}, that port only) or without (any port)
   */
  EdgeGuard(List<String> adminPaths, Set<String> allowedHosts) {
    this.adminPaths = adminPaths.stream().map(ServletPathSpec::new).toList();
    this.allowedHosts = Set.copyOf(allowedHosts);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    response.getHeaders().put(NOSNIFF);
    if (isAdmin(Request.getPathInContext(request))) {
      String host = request.getHeaders().get(HttpHeader.HOST);
      int port = Request.getLocalPort(request);
      if (host == null || !isThisServer(host, port)) {
        response.setStatus(HttpStatus.FORBIDDEN_403);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
        String named =
            host == null
                ? "the request names no Host"
                : "the Host header '" + host + "' is not this server's";
        Content.Sink.write(
            response,
            true,
            named + "; admin routes answer only to a loopback name" + " with port " + port + "\n",
            callback);
        return true;
      }
    }
    return super.handle(request, response, callback);
  }

  /** A plain loop: this runs for every request, /login included, and a stream would allocate. */
  private boolean isAdmin(String path) {
    for (ServletPathSpec spec : adminPaths) {
      if (spec.matches(path)) {
        return true;
      }
    }
    return false;
  }

  private boolean isThisServer(String host, int port) {
    String value = host.toLowerCase(Locale.ROOT);
    int nameEnd = value.startsWith("[") ? value.indexOf(']') + 1 : value.indexOf(':');
    if (nameEnd <= 0) {
      nameEnd = value.length();
    }
    String name = value.substring(0, nameEnd);
    String portPart = value.substring(nameEnd);
    if (LOOPBACK_NAMES.contains(name) && portPart.equals(":" + port)) {
      return true;
    }
    return allowedHosts.contains(value) || allowedHosts.contains(name);
  }
}
