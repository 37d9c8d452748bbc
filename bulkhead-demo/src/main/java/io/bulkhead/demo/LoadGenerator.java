package io.bulkhead.demo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Seed 000's load: {@code chats} requests to {@code /chat} at once, then after {@code loginsAfter}
 * {@code logins} requests to {@code /login} at once; every request's latency (to the last byte of the
 * answer) and status are recorded. Each request has its own connection, as a crowd of users would.
 *
 * <p>A run can be watched from another thread through {@link #chatsAnswered()} and
 * {@link #loginsAnswered()}.
 */
public final class LoadGenerator {

  public static final int CHATS = 80;
  public static final int LOGINS = 50;
  public static final Duration LOGINS_AFTER = Duration.ofSeconds(1);
  private static final int CLIENT_THREADS = 8;

  private final URI target;
  private final int chats;
  private final int logins;
  private final Duration loginsAfter;
  private final Duration timeout;
  private final AtomicInteger chatsAnswered = new AtomicInteger();
  private final AtomicInteger loginsAnswered = new AtomicInteger();

  /**
   * @param target the app, a loopback URL
   * @param timeout how long one request may take before it counts as "other"
   */
  public LoadGenerator(URI target, int chats, int logins, Duration loginsAfter, Duration timeout) {
    if (chats < 0 || logins < 0) {
      throw new CliException("--chats and --logins must not be negative but were " + chats + " and "
          + logins);
    }
    if (loginsAfter.isNegative()) {
      throw new CliException("--logins-after must not be negative but was "
          + Durations.format(loginsAfter));
    }
    this.target = target;
    this.chats = chats;
    this.logins = logins;
    this.loginsAfter = loginsAfter;
    this.timeout = timeout;
  }

  public int chats() {
    return chats;
  }

  public int logins() {
    return logins;
  }

  public int chatsAnswered() {
    return chatsAnswered.get();
  }

  public int loginsAnswered() {
    return loginsAnswered.get();
  }

  /**
   * Runs the load and waits for every answer.
   *
   * @throws CliException if nothing listens at the target
   */
  public LoadResult run() {
    String problem = unreachable(target);
    if (problem != null) {
      throw new CliException("nothing answers at " + target + " (" + problem + "): start the app"
          + " first with 'app', or run 'demo'");
    }
    // The client's threads exist before the first request: starting threads inside the burst would
    // be measured as latency of the app.
    ThreadPoolExecutor executor = new ThreadPoolExecutor(CLIENT_THREADS, CLIENT_THREADS, 0,
        TimeUnit.SECONDS, new LinkedBlockingQueue<>(), Threads.daemon("load-client-"));
    executor.prestartAllCoreThreads();
    HttpClient client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .executor(executor)
        .build();
    try {
      ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<?>> pending = new ArrayList<>(chats + logins);
      long start = System.nanoTime();
      for (int i = 0; i < chats; i++) {
        pending.add(send(client, Route.CHAT, start, samples, chatsAnswered));
      }
      long loginsAt = start + loginsAfter.toNanos();
      for (long left; (left = loginsAt - System.nanoTime()) > 0; ) {
        LockSupport.parkNanos(left); // pacing the schedule, not waiting for an event
      }
      for (int i = 0; i < logins; i++) {
        pending.add(send(client, Route.LOGIN, start, samples, loginsAnswered));
      }
      CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0])).join();
      List<Sample> sorted = new ArrayList<>(samples);
      sorted.sort(Comparator.comparingLong(Sample::sentAtNanos));
      long wall = 0;
      for (Sample s : sorted) {
        wall = Math.max(wall, s.answeredAtNanos());
      }
      return new LoadResult(sorted, wall);
    } finally {
      Threads.shutdown(client, executor);
    }
  }

  private CompletableFuture<?> send(HttpClient client, Route route, long start,
      ConcurrentLinkedQueue<Sample> samples, AtomicInteger answered) {
    HttpRequest request = HttpRequest.newBuilder(target.resolve(route.path()))
        .timeout(timeout)
        .build();
    // The latency ends when the body's last byte has been read, on the client's own thread: not when
    // the future completes, which the JDK does on another executor a moment later.
    HttpResponse.BodyHandler<Long> timed = info -> HttpResponse.BodySubscribers.mapping(
        HttpResponse.BodySubscribers.discarding(), ignored -> System.nanoTime());
    long sent = System.nanoTime();
    return client.sendAsync(request, timed).handle((response, failure) -> {
      long end = response != null ? response.body() : System.nanoTime();
      int status = response != null ? response.statusCode() : 0;
      samples.add(new Sample(route, sent - start, end - sent, status));
      answered.incrementAndGet();
      return null;
    });
  }

  /** Why nothing accepts connections at {@code uri} ("Connection refused"), or null if something does. */
  static String unreachable(URI uri) {
    try (Socket probe = new Socket()) {
      probe.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 2_000);
      return null;
    } catch (IOException e) {
      return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
  }
}
