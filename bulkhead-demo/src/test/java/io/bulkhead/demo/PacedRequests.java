package io.bulkhead.demo;

import io.bulkhead.internal.DaemonThreads;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Requests to one path at a steady rate, due on the clock whatever the answers do (an open loop: a
 * slow app does not slow the load down), each sent without waiting for the previous one. The rate
 * can change while it runs. Answers are counted by status; a request that fails without one counts
 * as status 0, and one due while {@value #MOST_OUTSTANDING} are still unanswered is dropped and
 * counted as -1, so that a stalled app cannot make the load pile up without end.
 */
final class PacedRequests implements AutoCloseable {

  static final int MOST_OUTSTANDING = 2_000;

  private final HttpRequest request;
  private final HttpClient client;
  private final ScheduledExecutorService pacer;
  private final Semaphore outstanding = new Semaphore(MOST_OUTSTANDING);
  private final Map<Integer, LongAdder> byStatus = new ConcurrentHashMap<>();
  private final ReentrantLock scheduling = new ReentrantLock();
  private ScheduledFuture<?> schedule; // guarded by scheduling

  PacedRequests(URI target, String name) {
    this.request = HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(30)).build();
    this.pacer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pace-" + name));
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();
  }

  /** Sends {@code perSecond} requests a second from now on; 0 stops sending. */
  void rate(int perSecond) {
    scheduling.lock();
    try {
      if (schedule != null) {
        schedule.cancel(false);
        schedule = null;
      }
      if (perSecond > 0) {
        long period = TimeUnit.SECONDS.toNanos(1) / perSecond;
        schedule = pacer.scheduleAtFixedRate(this::send, 0, period, TimeUnit.NANOSECONDS);
      }
    } finally {
      scheduling.unlock();
    }
  }

  private void send() {
    if (!outstanding.tryAcquire()) {
      count(-1);
      return;
    }
    client
        .sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .whenComplete(
            (answer, failure) -> {
              outstanding.release();
              count(failure == null ? answer.statusCode() : 0);
            });
  }

  private void count(int status) {
    byStatus.computeIfAbsent(status, s -> new LongAdder()).increment();
  }

  /** Answers so far by status (0: no answer, -1: dropped). */
  Map<Integer, Long> statuses() {
    Map<Integer, Long> out = new TreeMap<>();
    byStatus.forEach((status, n) -> out.put(status, n.sum()));
    return out;
  }

  /** Stops sending and waits (bounded) for the requests still out. */
  @Override
  public void close() throws InterruptedException {
    rate(0);
    pacer.shutdownNow();
    outstanding.tryAcquire(MOST_OUTSTANDING, 40, TimeUnit.SECONDS);
  }
}
