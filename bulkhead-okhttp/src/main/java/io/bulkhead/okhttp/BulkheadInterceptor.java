package io.bulkhead.okhttp;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.httpclient.BaseUrl;
import io.bulkhead.httpclient.BodySlot;
import io.bulkhead.httpclient.CompartmentFullException;
import io.bulkhead.httpclient.RetryAfter;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Puts an {@code OkHttpClient}'s calls into compartments, routed by URL ({@link UpstreamRoutes}): a
 * call takes a slot before its request is sent, waiting as the compartment's {@code max-queue} and
 * {@code max-wait} allow, and holds it until its response body is closed or read to its end, not
 * just until the headers arrive.
 *
 * <pre>{@code
 * BulkheadInterceptor bulkheads = BulkheadInterceptor.of(UpstreamRoutes.builder()
 *     .route("https://llm.internal/v1", llm)
 *     .route("billing.internal", billing)
 *     .build());
 * OkHttpClient client = bulkheads.applyTo(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <p><b>What the caller sees.</b> A full compartment fails the call with {@link
 * CompartmentFullException} (an {@code IOException}: {@code execute()} throws it, {@code enqueue}
 * hands it to {@code onFailure}) carrying the compartment's retry hint; nothing is sent. An
 * upstream that answers {@code 503} or {@code 429} fails the call with {@link
 * UpstreamUnavailableException}, carrying its {@code Retry-After}; the answer's body is closed and
 * the slot freed first. A request no route matches passes untouched.
 *
 * <p><b>The body holds the slot</b> as it holds the connection: close every response, as OkHttp
 * requires anyway. One whose body is never closed nor read to its end keeps its slot for good. The
 * slot is freed once, whichever of close, end of body or failure comes first.
 *
 * <p>Add it as an application interceptor ({@link #applyTo} does): the slot then covers OkHttp's
 * retries and redirects of the call. A call waiting for a slot holds its thread (the caller's for
 * {@code execute()}, a dispatcher thread for {@code enqueue}); cancelling the call does not
 * withdraw it from the queue, {@code max-wait} bounds that wait. This class is thread-safe.
 */
public final class BulkheadInterceptor implements Interceptor {

  private static final int OKHTTP_MAX_REQUESTS = 64;
  private static final int OKHTTP_MAX_REQUESTS_PER_HOST = 5;
  private static final int OKHTTP_MAX_IDLE_CONNECTIONS = 5;
  private static final long KEEP_ALIVE_MINUTES = 5;

  private final UpstreamRoutes routes;

  private BulkheadInterceptor(UpstreamRoutes routes) {
    this.routes = routes;
  }

  /** An interceptor that puts every call into {@code compartment}. */
  public static BulkheadInterceptor of(Bulkhead compartment) {
    return new BulkheadInterceptor(UpstreamRoutes.of(compartment));
  }

  /** An interceptor that routes each call by its URL; a call no route matches passes untouched. */
  public static BulkheadInterceptor of(UpstreamRoutes routes) {
    return new BulkheadInterceptor(Objects.requireNonNull(routes, "routes"));
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    Optional<Bulkhead> route = routes.route(request.url().uri());
    if (route.isEmpty()) {
      return chain.proceed(request);
    }
    Bulkhead compartment = route.get();
    BodySlot slot = BodySlot.acquire(compartment);
    Response response;
    try {
      response = chain.proceed(request);
    } catch (IOException | RuntimeException | Error e) {
      slot.free();
      throw e;
    }
    Optional<UpstreamUnavailableException> busy =
        UpstreamUnavailableException.ofAnswer(
            compartment.name(),
            request.method(),
            request.url().toString(),
            response.code(),
            response.header(RetryAfter.HEADER),
            Instant.now());
    if (busy.isPresent()) {
      try {
        response.close();
      } finally {
        slot.free();
      }
      throw busy.get();
    }
    return response.newBuilder().body(new PermitBody(response.body(), slot)).build();
  }

  /**
   * Adds this interceptor to {@code builder} and gives it a dispatcher and a connection pool that
   * agree with the routes' compartments, so that OkHttp's own limits never decide before a
   * compartment does: per host, {@code maxRequestsPerHost} is twice the sum of {@code limit +
   * max-queue} of the compartments routed there (room for as many calls being refused as there are
   * calls admitted or waiting), {@code maxRequests} twice the sum over all hosts, and the pool
   * keeps as many idle connections as the limits add up to, so a freed slot's connection is reused
   * rather than closed. OkHttp's defaults are kept where they are larger. It replaces the builder's
   * dispatcher and connection pool; the sizes are those of the limits at the time of the call.
   */
  public OkHttpClient.Builder applyTo(OkHttpClient.Builder builder) {
    Map<String, Long> perHost = new HashMap<>();
    Map<Bulkhead, Boolean> counted = new IdentityHashMap<>();
    long total = 0;
    long connections = 0;
    for (UpstreamRoutes.Route route : routes.routes()) {
      BaseUrl upstream = route.upstream();
      String host = upstream == null ? "*" : upstream.host() + ":" + upstream.port();
      BulkheadConfig config = route.compartment().config();
      long need = (long) config.limit() + config.maxQueue().orElse(Integer.MAX_VALUE);
      perHost.merge(host, need, Long::sum);
      if (counted.put(route.compartment(), Boolean.TRUE) == null) {
        total += need;
        connections += config.limit();
      }
    }
    long hostMax = perHost.values().stream().mapToLong(Long::longValue).max().orElse(0);
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(atLeast(OKHTTP_MAX_REQUESTS, 2 * total));
    dispatcher.setMaxRequestsPerHost(atLeast(OKHTTP_MAX_REQUESTS_PER_HOST, 2 * hostMax));
    return builder
        .addInterceptor(this)
        .dispatcher(dispatcher)
        .connectionPool(
            new ConnectionPool(
                atLeast(OKHTTP_MAX_IDLE_CONNECTIONS, connections),
                KEEP_ALIVE_MINUTES,
                TimeUnit.MINUTES));
  }

  private static int atLeast(int floor, long wanted) {
    return (int) Math.max(floor, Math.min(Integer.MAX_VALUE, wanted));
  }

  @Override
  public String toString() {
    return "BulkheadInterceptor" + routes.routes();
  }
}
