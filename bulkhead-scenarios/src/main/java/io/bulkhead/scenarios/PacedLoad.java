package io.bulkhead.scenarios;

import io.bulkhead.internal.DaemonThreads;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Steady load on the checkout API: {@code /login} and {@code /checkout}, each at a fixed rate, due
 * on the clock (an open loop: a stalled API does not slow the load, and a call's latency counts
 * from when it was due, so a stall is never hidden).
 *
 * <p>Threads: one pacer per route computes due times and hands each call to a bounded pool of
 * senders; a call that finds every sender busy fails at once (it would otherwise wait in a queue
 * and count the load generator's backlog as the API's latency). Each sender adds its outcome to a
 * concurrent queue; {@link #stop} stops the pacers, then waits for the senders, and only then are
 * the outcomes read, so no outcome is added after they are.
 */
final class PacedLoad {

  /**
   * One call: which route, when it was due (from the start), how long it took, whether it was a
   * 200.
   */
  record Call(boolean checkout, long dueNanos, long latencyNanos, boolean ok) {}

  private static final int MOST_IN_FLIGHT = 64;
  private static final Duration STOP_PATIENCE = Duration.ofSeconds(10);

  private final URI api;
  private final Duration interval;
  private final Duration timeout;
  private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
  private final ThreadPoolExecutor senders =
      new ThreadPoolExecutor(
          0,
          MOST_IN_FLIGHT,
          10,
          TimeUnit.SECONDS,
          new SynchronousQueue<>(),
          DaemonThreads.numbered("process-load-"));
  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(1))
          .build();
  private final List<Thread> pacers = new ArrayList<>();
  private volatile boolean stopping;
  private long start;

  PacedLoad(URI api, int perSecond, Duration timeout) {
    this.api = api;
    this.interval = Duration.ofNanos(TimeUnit.SECONDS.toNanos(1) / perSecond);
    this.timeout = timeout;
  }

  /** The {@link System#nanoTime()} every {@link Call#dueNanos()} counts from. */
  long start() {
    return start;
  }

  /** Sends {@code calls} requests to each route, one at a time, and forgets how they went. */
  void warmUp(int calls) {
    for (String path : new String[] {"/login", "/checkout"}) {
      HttpRequest request = HttpRequest.newBuilder(api.resolve(path)).timeout(timeout).build();
      for (int i = 0; i < calls; i++) {
        try {
          client.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (IOException failed) {
          // A warm-up call that fails says nothing yet: the measured load will count failures.
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  void begin() {
    start = System.nanoTime();
    for (boolean checkout : new boolean[] {false, true}) {
      pacers.add(
          DaemonThreads.start(checkout ? "pace-checkout" : "pace-login", () -> pace(checkout)));
    }
  }

  private void pace(boolean checkout) {
    HttpRequest request =
        HttpRequest.newBuilder(api.resolve(checkout ? "/checkout" : "/login"))
            .timeout(timeout)
            .build();
    for (long due = start; !stopping; due += interval.toNanos()) {
      for (long left; (left = due - System.nanoTime()) > 0 && !stopping; ) {
        LockSupport.parkNanos(left); // pacing the schedule, not waiting for an event
      }
      long dueAt = due;
      try {
        senders.execute(() -> send(request, checkout, dueAt));
      } catch (RejectedExecutionException allBusy) {
        calls.add(new Call(checkout, dueAt - start, System.nanoTime() - dueAt, false));
      }
    }
  }

  private void send(HttpRequest request, boolean checkout, long due) {
    boolean ok;
    try {
      ok = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      ok = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ok = false;
    }
    calls.add(new Call(checkout, due - start, System.nanoTime() - due, ok));
  }

  /** Stops sending, waits (bounded) for the calls in flight, and returns every call. */
  List<Call> stop() throws InterruptedException {
    stopping = true;
    for (Thread pacer : pacers) {
      pacer.join(STOP_PATIENCE.toMillis());
    }
    senders.shutdown();
    if (!senders.awaitTermination(
        STOP_PATIENCE.toMillis() + timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      senders.shutdownNow();
    }
    Threads.shutdown(client, senders);
    return List.copyOf(calls);
  }
}
