package io.bulkhead.httpclient;

import io.bulkhead.Bulkhead;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.Durations;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.reflect.Method;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A client for one upstream dependency: its own compartment, its own {@link HttpClient} with its
 * own connections, and a deadline on every call.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1)).build();
 * UpstreamClient provider = UpstreamClient.builder(llm).deadline(Duration.ofSeconds(45)).build();
 *
 * provider.sendAsync(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString())
 *     .whenComplete((answer, failure) -> ...);
 * // failure: BulkheadFullException    the compartment was full; the upstream was not called (503)
 * //          UpstreamTimeoutException the deadline passed; the exchange was aborted (504)
 * //          UpstreamException        the upstream could not be reached or failed the exchange (502)
 * }</pre>
 *
 * <p><b>The compartment caps the connections.</b> A call holds a slot from before its request is
 * sent until its connection is back in the pool or closed, and the client speaks HTTP/1.1 (one
 * connection per exchange) and opens a connection only when every pooled one is busy: it never
 * holds more connections to the upstream than the compartment's limit, nothing queues out of sight
 * inside it, and an aborted or unparsable exchange has its connection closed before its slot is
 * freed. <b>The deadline</b> bounds how long a call holds its slot, from admission (the wait is
 * bounded by the compartment's {@code maxWait}) to the last byte of the body.
 *
 * <p><b>Threads.</b> The futures of admitted calls complete on the client's executor (its own
 * daemon threads {@code upstream-<name>-<n>}, or {@link Builder#executor yours}), so a dependent
 * that blocks holds up only its own call; the deadline timer runs no code of yours. Cancelling a
 * future withdraws a waiting call or aborts a running one; {@link #close()} aborts the calls in
 * flight and ends the client's own threads. A call the compartment refuses fails as {@link
 * Bulkhead#submit} says. This class is thread-safe.
 */
public final class UpstreamClient implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.http");
  private static final Method SHUTDOWN_NOW = findShutdownNow();

  /**
   * How soon a deadline is tried again when neither the client's executor nor CompletableFuture's
   * default one took its abort.
   */
  static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final Bulkhead compartment;
  private final Duration deadline;
  private final long deadlineNanos;
  private final Executor executor;
  private final boolean unavailableAsException;

  /** The client's own pool, which close() shuts down; null when the executor is the user's. */
  private final @Nullable ExecutorService ownExecutor;

  private final ScheduledThreadPoolExecutor timer;
  private final HttpClient http;
  private final Set<UpstreamCall<?>> inFlight = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private UpstreamClient(
      Bulkhead compartment,
      Duration deadline,
      @Nullable Executor supplied,
      boolean unavailableAsException) {
    this.compartment = compartment;
    this.unavailableAsException = unavailableAsException;
    this.deadline = deadline;
    this.deadlineNanos = deadline.toNanos();
    String name = compartment.name();
    this.ownExecutor =
        supplied == null
            ? Executors.newCachedThreadPool(DaemonThreads.numbered("upstream-" + name + "-"))
            : null;
    this.executor = supplied == null ? ownExecutor : supplied;
    this.timer =
        new ScheduledThreadPoolExecutor(
            1, DaemonThreads.numbered("upstream-" + name + "-deadlines-"));
    // No thread lingers while no deadline is pending.
    timer.setKeepAliveTime(1, TimeUnit.SECONDS);
    timer.allowCoreThreadTimeOut(true);
    timer.setRemoveOnCancelPolicy(true);
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1) // one connection per exchange: the cap holds
            .followRedirects(HttpClient.Redirect.NEVER)
            .executor(executor)
            .build();
  }

  /** Starts building a client whose calls go through {@code compartment}. */
  public static Builder builder(Bulkhead compartment) {
    return new Builder(compartment);
  }

  /** The upstream's name: the name of its compartment. */
  public String name() {
    return compartment.name();
  }

  /** The compartment every call goes through; its limit is the client's connection cap. */
  public Bulkhead compartment() {
    return compartment;
  }

  /** How long one call may hold its slot. */
  public Duration deadline() {
    return deadline;
  }

  /** Whether a 503 or 429 answer fails the call with {@link UpstreamUnavailableException}. */
  boolean unavailableAsException() {
    return unavailableAsException;
  }

  /** The executor the client runs on: its own pool, or the one given to the builder. */
  Executor executor() {
    return executor;
  }

  /**
   * Sends {@code request} when the compartment has a slot for it, without holding a thread while it
   * waits or while the upstream answers.
   *
   * <p>The future fails with {@link io.bulkhead.BulkheadFullException} if the compartment refused
   * the call, {@link UpstreamTimeoutException} if the deadline passed, {@link UpstreamException} if
   * the exchange failed, and {@link CancellationException} if it was cancelled or the client
   * closed. An answer with any status code completes it normally, unless the client was built with
   * {@link Builder#unavailableAsException()}: then a 503 or 429 fails it with {@link
   * UpstreamUnavailableException}, which carries the upstream's {@code Retry-After}.
   *
   * <p>Use a body handler that reads the whole body, such as {@code ofString()}: a streaming one
   * such as {@code ofInputStream()} completes at the headers, and the connection then outlives the
   * slot.
   *
   * @throws IllegalArgumentException if {@code request} carries its own {@code timeout()}: the JDK
   *     would end such an exchange on its own thread, possibly freeing the slot before the
   *     connection is closed; the client's deadline bounds every call instead
   * @throws IllegalStateException if the client is closed
   */
  public <T extends @Nullable Object> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(bodyHandler, "bodyHandler");
    if (request.timeout().isPresent()) {
      throw new IllegalArgumentException(
          "the request to upstream '"
              + name()
              + "' carries its own"
              + " timeout ("
              + request.timeout().get()
              + "); build it without timeout(): the client's "
              + Durations.format(deadline)
              + " deadline bounds every call and aborts it safely");
    }
    if (closed) {
      throw new IllegalStateException("upstream client '" + name() + "' is closed");
    }
    return compartment.submit(
        () ->
            new UpstreamCall<>(this, request, bodyHandler)
                .start(http, timer, executor, deadlineNanos));
  }

  /**
   * Sends {@code request} like {@link #sendAsync} and waits for the answer. If the waiting thread
   * is interrupted, the call is cancelled (its connection closed and its slot freed) and {@link
   * InterruptedException} is thrown.
   *
   * @throws io.bulkhead.BulkheadFullException if the compartment refused the call
   * @throws UpstreamTimeoutException if the deadline passed
   * @throws UpstreamException if the exchange failed
   * @throws IllegalStateException if the client is closed
   */
  public <T extends @Nullable Object> HttpResponse<T> send(
      HttpRequest request, HttpResponse.BodyHandler<T> bodyHandler)
      throws IOException, InterruptedException {
    CompletableFuture<HttpResponse<T>> call = sendAsync(request, bodyHandler);
    try {
      return call.get();
    } catch (InterruptedException e) {
      call.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IOException(cause);
    }
  }

  /*
   * A call adds itself to `inFlight` before it sends, then reads `closed`; close() sets `closed`, then
   * reads `inFlight`. T1 (a call starting) and T2 (close) race: both are volatile/concurrent accesses,
   * so either T1 sees `closed` and gives up without sending, or T2 finds T1 in `inFlight` and aborts
   * it. A call is never sent unnoticed by a close that has returned.
   */
  boolean track(UpstreamCall<?> call) {
    inFlight.add(call);
    if (closed) {
      inFlight.remove(call);
      return false;
    }
    return true;
  }

  void untrack(UpstreamCall<?> call) {
    inFlight.remove(call);
  }

  /**
   * Aborts the calls in flight (each connection closed, each slot freed), refuses new ones, and
   * lets the client's threads end; an executor given to {@link Builder#executor} is left running.
   * Calls still waiting in the compartment fail with {@link CancellationException} when they are
   * admitted. On Java 21 and later the {@link HttpClient} is shut down as well; on Java 17 its idle
   * connections and selector thread end when the client is garbage collected, as the JDK provides
   * no way to close it.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<UpstreamCall<?>> calls = new ArrayList<>(inFlight);
    for (UpstreamCall<?> call : calls) {
      call.abort(new CancellationException("upstream client '" + name() + "' was closed"));
    }
    timer.shutdownNow();
    if (SHUTDOWN_NOW != null) {
      try {
        SHUTDOWN_NOW.invoke(http);
      } catch (ReflectiveOperationException e) {
        LOG.log(Level.DEBUG, "HttpClient.shutdownNow failed", e);
      }
    }
    if (ownExecutor != null) {
      ownExecutor.shutdownNow();
    }
  }

  @Override
  public String toString() {
    return "UpstreamClient{name="
        + name()
        + ", deadline="
        + Durations.format(deadline)
        + ", compartment="
        + compartment
        + "}";
  }

  /** {@code HttpClient.shutdownNow()} exists from Java 21; this module compiles for Java 17. */
  private static Method findShutdownNow() {
    try {
      return HttpClient.class.getMethod("shutdownNow");
    } catch (NoSuchMethodException java17) {
      return null;
    }
  }

  /**
   * Builds an {@link UpstreamClient}. The deadline has no default: how long a call may hold its
   * slot is a decision about the upstream, not something to inherit.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private final Bulkhead compartment;
    private Duration deadline;
    private @Nullable Executor executor;
    private boolean unavailableAsException;

    private Builder(Bulkhead compartment) {
      this.compartment = Objects.requireNonNull(compartment, "compartment");
    }

    /**
     * Sets how long one call may hold its slot, from admission to the last byte of the answer.
     *
     * @throws IllegalArgumentException if {@code deadline} is not positive, or longer than a day
     */
    public Builder deadline(Duration deadline) {
      Objects.requireNonNull(deadline, "deadline");
      if (deadline.isNegative() || deadline.isZero()) {
        throw new IllegalArgumentException("deadline must be positive but was " + deadline);
      }
      if (deadline.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException(
            "deadline must be at most a day (PT24H) but was "
                + deadline
                + ": a call that may hold its slot that long holds it forever");
      }
      this.deadline = deadline;
      return this;
    }

    /**
     * Sets the executor the client's {@link HttpClient} runs its work on, where the futures of
     * admitted calls complete (your dependents run there) and deadlines hand their aborts. The
     * client never shuts it down: keep it running while the client is open and close it yourself
     * after. Without one, the client starts its own pool (a thread whenever none is idle) and shuts
     * it down on {@link UpstreamClient#close()}. On Java 21 and later, virtual threads:
     *
     * <pre>{@code
     * ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor();  // yours to close
     * UpstreamClient provider = UpstreamClient.builder(llm).deadline(Duration.ofSeconds(45))
     *     .executor(virtual).build();
     * }</pre>
     *
     * <p>Supply one that never refuses a task (a thread per task, or one started whenever none is
     * idle): a task waits for a thread like any other, so a queue behind busy threads delays
     * answers and aborts, and the JDK's {@link HttpClient} stops working for good when its executor
     * refuses a task in mid-exchange. A refusal still loses no call and leaks no slot: a call your
     * executor refuses to send fails with that {@link
     * java.util.concurrent.RejectedExecutionException}, an answer it refuses completes on the JDK's
     * thread that delivered it, and a deadline's abort it refuses runs on {@link
     * CompletableFuture#defaultExecutor()} (never on the timer).
     *
     * @throws NullPointerException if {@code executor} is null
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Makes an answer that says the upstream is busy ({@code 503}, {@code 429}) fail the call with
     * {@link UpstreamUnavailableException}, which carries the upstream's {@code Retry-After} as a
     * {@link java.time.Duration}, instead of completing it with the response: for a caller that
     * backs off (the OkHttp and HttpClient 5 edges always do this). Its body is read, or closed if
     * it is a stream, before the call fails, and the slot is freed as for any answer.
     */
    public Builder unavailableAsException() {
      this.unavailableAsException = true;
      return this;
    }

    /**
     * Returns a new client with its own {@link HttpClient}.
     *
     * @throws IllegalArgumentException if the deadline was not set
     */
    public UpstreamClient build() {
      if (deadline == null) {
        throw new IllegalArgumentException(
            "deadline was not set for upstream client '"
                + compartment.name()
                + "': call deadline(Duration) with how long one call may hold its"
                + " slot");
      }
      return new UpstreamClient(compartment, deadline, executor, unavailableAsException);
    }
  }
}
