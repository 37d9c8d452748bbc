package io.bulkhead.scenarios;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.httpclient.UpstreamClient;
import io.bulkhead.httpclient.UpstreamException;
import io.bulkhead.httpclient.UpstreamTimeoutException;
import io.bulkhead.insight.Insight;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.Durations;
import io.bulkhead.jetty.BulkheadHandler;
import io.bulkhead.jetty.Rejection;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.http.pathmap.ServletPathSpec;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.PathMappingsHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The app of the slow-upstream experiment: {@code /login} answers at once and never calls the
 * upstream; {@code /chat} calls the slow upstream. Every route sits behind a server-wide cap of
 * slots with an unbounded queue and unbounded wait (a platform's per-instance concurrency limit,
 * like Cloud Run's); in {@link Mode#BULKHEAD bulkhead} mode {@code /chat} also goes through the
 * upstream's own compartment and its own client, capped at the compartment's limit in connections.
 *
 * <p>The compartments live in a {@link BulkheadRegistry} ({@code server}, and {@code llm} in
 * bulkhead mode) for whatever watches them. The app watches them itself on routes outside the
 * server-wide cap: {@code /metrics} (Prometheus text), {@code /bulkheads} (a JSON snapshot with
 * each compartment's diagnosis) and {@code /dashboard} (a live page); see {@link Observability}.
 * More routes can be added before {@link #start}: {@link #route} puts one behind the server-wide
 * cap like {@code /login}, {@link #adminRoute} keeps one out of it so it answers while the server
 * is saturated (metrics, a dashboard), and {@link #replaceRoute} swaps the handler of an existing
 * route.
 *
 * <pre>{@code
 * try (DemoApp app = new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream))) {
 *   app.adminRoute("/metrics", metricsHandler);
 *   app.start(3000);
 *   ...
 * }
 * }</pre>
 */
public class DemoApp implements AutoCloseable {

  private static final Pattern ALLOWED_HOST =
      Pattern.compile("([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?");

  /**
   * Jetty threads of the app, a fixed pool started with it. The app's handlers never block: /login
   * answers at once, /chat waits for the upstream without a thread, a request queued for a server
   * slot holds none. Jetty runs them on its selector thread (see {@link #start}); the pool runs a
   * queued request once a slot is handed to it, for microseconds, so two per core keep up with any
   * burst; the rest are Jetty's own (its acceptor, its selector, the reserved thread it keeps for
   * handing work over) and the disconnect watcher's. Jetty's default, 8 threads growing to 200 on
   * demand, started about 60 threads in the first burst of the slow-upstream experiment: each one a
   * clone() and a stack paid for while the logins waited, and 60 runnable threads on two cores
   * switching in turn. A route that blocks a thread (see {@link #replaceRoute}) needs the pool
   * grown.
   */
  static final int THREADS = 8 + 2 * Runtime.getRuntime().availableProcessors();

  /** The path /chat calls on the upstream. */
  public static final String UPSTREAM_PATH = "/complete";

  private final AppSettings settings;
  private final URI upstreamUri; // what /chat calls, resolved once rather than per call
  private final BulkheadRegistry registry = BulkheadRegistry.create();
  private final Bulkhead serverCap;
  private final UpstreamClient llmClient; // bulkhead mode
  private final HttpClient sharedClient; // shared mode
  private final ExecutorService sharedExecutor; // shared mode
  private final Map<String, Handler> routes = new LinkedHashMap<>();
  private final Observability observability;
  private final List<String> adminPaths = new ArrayList<>();
  private Server server;
  private int port;
  private EdgeLimits edgeLimits = EdgeLimits.defaults();
  private final Set<String> allowedHosts = new LinkedHashSet<>();

  /**
   * Lets the admin routes ({@code /bulkheads}, {@code /metrics}, {@code /dashboard} and those added
   * with {@link #adminRoute}) answer requests whose {@code Host} is {@code host} as well: a name
   * ({@code bulkheads.internal}, any port) or a name and a port ({@code bulkheads.internal:8080}),
   * for a reverse proxy that forwards its own name. Without it they answer only to {@code
   * localhost}, {@code 127.0.0.1} or {@code [::1]} with the app's port, so that a web page that
   * rebinds its own name to 127.0.0.1 cannot read them.
   *
   * @throws IllegalStateException if the app has started
   * @throws IllegalArgumentException if {@code host} is blank or holds a character a host cannot
   */
  public DemoApp allowHost(String host) {
    Objects.requireNonNull(host, "host");
    if (server != null) {
      throw new IllegalStateException(
          "hosts must be allowed before the app starts; '" + host + "' came too late");
    }
    if (!ALLOWED_HOST.matcher(host).matches()) {
      throw new IllegalArgumentException(
          "allowed host '"
              + host
              + "' is not a host name or"
              + " name:port (letters, digits, '.', '-', or an [IPv6] address)");
    }
    allowedHosts.add(host.toLowerCase(Locale.ROOT));
    return this;
  }

  /** Limits of the HTTP edge other than the defaults (tests use small ones); before the start. */
  DemoApp edgeLimits(EdgeLimits limits) {
    if (server != null) {
      throw new IllegalStateException("the edge limits must be set before the app starts");
    }
    this.edgeLimits = Objects.requireNonNull(limits, "limits");
    return this;
  }

  /**
   * Accepts at most {@code connections} connections at once instead of the default (512, or half
   * the process's open-file limit if that is lower): for the slow-upstream experiment at ten or a
   * hundred times its load, where every request is a connection of its own. Raise the process's
   * open-file limit with it ({@code ulimit -n}); the kernel's accept queue holds the next ones.
   *
   * @throws IllegalStateException if the app has started
   * @throws IllegalArgumentException if {@code connections} is below 1
   */
  public DemoApp maxConnections(int connections) {
    if (connections < 1) {
      throw new IllegalArgumentException(
          "maxConnections must be at least 1 but was " + connections);
    }
    return edgeLimits(
        new EdgeLimits(connections, edgeLimits.idleTimeout(), edgeLimits.requestHeadDeadline()));
  }

  /** Builds the app and its compartments; nothing listens until {@link #start}. */
  public DemoApp(AppSettings settings) {
    this(null, settings);
  }

  /**
   * Builds the app in bulkhead mode with {@code llm} as the upstream's compartment in place of a
   * local one: a fleet compartment on Redis, say, whose limit holds across several processes of the
   * app. The settings' llm limit, queue and wait are then {@code llm}'s business; the client's
   * connection cap is {@code llm}'s limit. Nothing listens until {@link #start}.
   *
   * @throws IllegalArgumentException if the settings are not in bulkhead mode
   */
  public DemoApp(AppSettings settings, Bulkhead llm) {
    this(Objects.requireNonNull(llm, "llm"), settings);
  }

  /** {@code givenLlm} null: a local llm compartment of the settings' figures in bulkhead mode. */
  private DemoApp(Bulkhead givenLlm, AppSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
    if (givenLlm != null && settings.mode() != Mode.BULKHEAD) {
      throw new IllegalArgumentException(
          "a given llm compartment needs bulkhead mode, not " + settings.mode().label());
    }
    this.upstreamUri = settings.upstream().resolve(UPSTREAM_PATH);
    this.serverCap =
        registry.register(
            Bulkhead.builder("server")
                .limit(settings.serverLimit())
                .unboundedQueue()
                .unboundedWait()
                .build());
    if (settings.mode() == Mode.BULKHEAD) {
      Bulkhead llm = registry.register(givenLlm != null ? givenLlm : settings.llm().build());
      this.llmClient = UpstreamClient.builder(llm).deadline(settings.upstreamDeadline()).build();
      this.sharedClient = null;
      this.sharedExecutor = null;
    } else {
      this.llmClient = null;
      // A plain client with no cap, like Node's global agent: every call its connection.
      this.sharedExecutor =
          Executors.newCachedThreadPool(DaemonThreads.numbered("app-shared-client-"));
      this.sharedClient =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .executor(sharedExecutor)
              .build();
    }
    routes.put("/login", new Login());
    routes.put("/chat", new Chat());
    this.observability = new Observability(registry);
    observability.install(this::adminRoute);
  }

  /** The settings the app was built with. */
  public AppSettings settings() {
    return settings;
  }

  /** The app's compartments: {@code server}, and {@code llm} in bulkhead mode. */
  public BulkheadRegistry registry() {
    return registry;
  }

  /** "server (50 in flight, unbounded queue), llm (10 in flight, 20 waiting, 1 s wait)". */
  public String describeCompartments() {
    StringBuilder out = new StringBuilder();
    for (io.bulkhead.Compartment b : registry.all()) {
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(b.name()).append(" (").append(b.config().limit()).append(" in flight, ");
      java.util.OptionalInt queue = b.config().maxQueue();
      if (queue.isEmpty()) {
        out.append("unbounded queue)");
      } else {
        out.append(queue.getAsInt())
            .append(" waiting, ")
            .append(b.config().maxWait().map(Durations::format).orElse("unbounded"))
            .append(" wait)");
      }
    }
    return out.toString();
  }

  /**
   * Adds a route behind the server-wide cap, like {@code /login} and {@code /chat}.
   *
   * @throws IllegalStateException if the app has started
   * @throws IllegalArgumentException if {@code path} is not an absolute path or is already routed
   */
  public DemoApp route(String path, Handler handler) {
    addRoute(path, handler);
    return this;
  }

  /**
   * Adds a route that bypasses the server-wide cap, so it answers while every slot is taken: for
   * metrics and dashboards that must show a saturated server.
   *
   * @throws IllegalStateException if the app has started
   * @throws IllegalArgumentException if {@code path} is not an absolute path or is already routed
   */
  public DemoApp adminRoute(String path, Handler handler) {
    addRoute(path, handler);
    adminPaths.add(path);
    return this;
  }

  /**
   * Replaces the handler of a route that is already there ({@code /login}, {@code /chat}, or one
   * added with {@link #route} or {@link #adminRoute}), keeping its place behind or outside the
   * server-wide cap. Everything else about the app stays as it was: the server cap, its queue,
   * Jetty's setup and the other routes. This lets an experiment compare another way of guarding
   * {@code /chat} inside the very same app (the benchmarks put it behind another library's
   * bulkhead), without the demo depending on that library. The app's thread pool is sized for
   * handlers that never block; one that blocks a thread per request needs it grown ({@code
   * QueuedThreadPool.setMinThreads} on {@code server().getThreadPool()} once started), as the
   * benchmarks' peer app does.
   *
   * @throws IllegalStateException if the app has started
   * @throws IllegalArgumentException if no route {@code path} exists
   */
  public DemoApp replaceRoute(String path, Handler handler) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(handler, "handler");
    if (server != null) {
      throw new IllegalStateException(
          "routes must be replaced before the app starts; '" + path + "' came too late");
    }
    if (!routes.containsKey(path)) {
      throw new IllegalArgumentException(
          "there is no route '" + path + "' to replace; the routes are " + routes.keySet());
    }
    routes.put(path, handler);
    return this;
  }

  private void addRoute(String path, Handler handler) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(handler, "handler");
    if (server != null) {
      throw new IllegalStateException(
          "routes must be added before the app starts; '" + path + "' came too late");
    }
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException(
          "route '" + path + "' must be an absolute path like /metrics");
    }
    if (routes.containsKey(path)) {
      throw new IllegalArgumentException("route '" + path + "' is already taken");
    }
    routes.put(path, handler);
  }

  /**
   * Listens on 127.0.0.1:{@code port} (0: any free port) and returns the port.
   *
   * @throws CliException if the port is in use
   * @throws IllegalStateException if the app has already started
   */
  public int start(int port) {
    if (server != null) {
      throw new IllegalStateException("the app has already started on port " + this.port);
    }
    // Not dynamic: its routes are fixed once it starts, so it reports what its handlers are. All of
    // them are non-blocking, so the whole tree is, and Jetty runs a request on the selector thread
    // that read it instead of handing it to a pool thread: a burst is served by one thread on one
    // core, without a wake-up per request, leaving the other core to whoever else runs there (the
    // experiment's client). A dynamic one reports "blocking" whatever its handlers are.
    PathMappingsHandler paths = new PathMappingsHandler(false);
    for (Map.Entry<String, Handler> r : routes.entrySet()) {
      paths.addMapping(new ServletPathSpec(r.getKey()), r.getValue());
    }
    RouteTable.Builder cap = RouteTable.builder().route("/**", serverCap);
    for (String admin : adminPaths) {
      cap.bypass(admin.endsWith("/*") ? admin + "*" : admin); // a servlet spec's /* is our /**
    }
    BulkheadHandler bulkheads = BulkheadHandler.of(cap.build());
    bulkheads.setHandler(paths);
    // Requests wait in the unbounded server queue for as long as the upstream makes them: Jetty's
    // idle timeout while a request is handled must not end them first.
    Duration idle = settings.upstreamDeadline().multipliedBy(4).plusMinutes(1);
    Server s = Servers.create("app-" + settings.mode().label(), port, idle, edgeLimits);
    QueuedThreadPool pool = (QueuedThreadPool) s.getThreadPool();
    pool.setMaxThreads(THREADS);
    pool.setMinThreads(THREADS); // all started with the server: a burst creates none
    EdgeGuard guard = new EdgeGuard(adminPaths, allowedHosts);
    guard.setHandler(bulkheads);
    s.setHandler(guard);
    this.server = s;
    this.port = Servers.start(s, "app", "--port");
    return this.port;
  }

  /** The app's address once started. */
  public URI uri() {
    if (server == null) {
      throw new IllegalStateException("the app has not started");
    }
    return URI.create("http://127.0.0.1:" + port);
  }

  /** The Jetty server once started, for tests and extensions. */
  public Server server() {
    return server;
  }

  /** What the app serves about its compartments, to add resources or meters to it. */
  public Observability observability() {
    return observability;
  }

  /**
   * The diagnosis of and sizing advice on every compartment, sampled once a second; also served at
   * /bulkheads.
   */
  public Insight insight() {
    return observability.insight();
  }

  /** Stops listening, the diagnosis sampler and the upstream clients. */
  @Override
  public void close() {
    if (server != null) {
      Servers.stopQuietly(server);
    }
    observability.close();
    if (llmClient != null) {
      llmClient.close();
    }
    if (sharedClient != null) {
      Threads.shutdown(sharedClient, sharedExecutor);
    }
  }

  private CompletableFuture<HttpResponse<String>> callUpstream() {
    URI uri = upstreamUri;
    if (llmClient != null) {
      return llmClient.sendAsync(
          HttpRequest.newBuilder(uri).build(),
          HttpResponse.BodyHandlers.ofString()); // the client applies its own deadline
    }
    return sharedClient.sendAsync(
        HttpRequest.newBuilder(uri).timeout(settings.upstreamDeadline()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static void answer(Response response, Callback callback, int status, String body) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    Content.Sink.write(response, true, body, callback);
  }

  /** Whether {@code failure} is, or was caused by, a refused connection: nothing listens there. */
  private static boolean refused(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Answers at once; never calls the upstream. Its header and body are encoded once, not per
   * request: a login is the request the experiment times, and it does nothing else.
   */
  private static final class Login extends Handler.Abstract.NonBlocking {
    private static final HttpField CONTENT_TYPE =
        new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    private static final ByteBuffer OK =
        ByteBuffer.wrap("ok\n".getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      response.setStatus(HttpStatus.OK_200);
      response.getHeaders().put(CONTENT_TYPE);
      response.write(true, OK.slice(), callback); // a view of its own: its position is the write's
      return true;
    }
  }

  /**
   * Calls the upstream without holding a thread and relays its answer. A full compartment is a 503
   * with Retry-After, a missed deadline a 504, any other failure a 502.
   */
  private final class Chat extends Handler.Abstract.NonBlocking {
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      CompletableFuture<HttpResponse<String>> call = callUpstream();
      // The client left (BulkheadHandler closes its connection) or Jetty gave up on the request:
      // nobody waits for the answer, so abort the call, which closes its upstream connection and
      // frees its llm slot now rather than when the upstream answers. The answer below then fails
      // Jetty's callback, which frees the server slot.
      request.addFailureListener(gone -> call.cancel(true));
      call.whenComplete(
          (answer, failure) -> {
            try {
              if (failure == null) {
                if (answer.statusCode() == HttpStatus.OK_200) {
                  answer(response, callback, HttpStatus.OK_200, answer.body());
                } else {
                  answer(
                      response,
                      callback,
                      HttpStatus.BAD_GATEWAY_502,
                      "the upstream answered " + answer.statusCode() + "\n");
                }
                return;
              }
              Throwable cause =
                  failure instanceof CompletionException && failure.getCause() != null
                      ? failure.getCause()
                      : failure;
              if (cause instanceof BulkheadFullException) {
                Rejection.send(response, callback, (BulkheadFullException) cause);
              } else if (cause instanceof UpstreamTimeoutException
                  || cause instanceof HttpTimeoutException) {
                answer(
                    response,
                    callback,
                    HttpStatus.GATEWAY_TIMEOUT_504,
                    "the upstream did not answer in time\n");
              } else if (refused(cause)) {
                answer(
                    response,
                    callback,
                    HttpStatus.BAD_GATEWAY_502,
                    "the upstream refused the connection: it is down or restarting\n");
              } else if (cause instanceof UpstreamException || cause instanceof IOException) {
                answer(response, callback, HttpStatus.BAD_GATEWAY_502, "the upstream failed\n");
              } else {
                callback.failed(cause);
              }
            } catch (Throwable t) {
              callback.failed(t);
            }
          });
      return true;
    }
  }
}
