package io.bulkhead.scenarios;

import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.Durations;
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
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The slow-upstream experiment's load: {@code chats} requests to {@code /chat} at once, then after
 * {@code loginsAfter} {@code logins} requests to {@code /login} at once; every request's latency
 * (to the last byte of the answer) and status are recorded. Each request has its own connection, as
 * a crowd of users would, and its own thread, started before the clock so that the burst measures
 * the app rather than the load generator.
 *
 * <p>A run can be watched from another thread through {@link #chatsAnswered()}, {@link
 * #loginsAnswered()}, and {@link #startedAtNanos()}, which puts what the watcher sees on the run's
 * own time axis.
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
  private volatile OptionalLong startedAtNanos = OptionalLong.empty();

  /**
   * @param target the app, a loopback URL
   * @param timeout how long one request may take before it counts as "other"
   */
  /**
   * The most requests of one kind a run sends. Each is its own thread and connection, all sent at
   * once: ten thousand already measures the machine's thread and file-descriptor limits more than
   * the app, and a count near {@code int}'s max would ask for billions of threads.
   */
  public static final int MOST_REQUESTS = 10_000;

  /**
   * The longest wait before the logins: a run is watched by someone, and a day is more than enough.
   */
  public static final Duration LATEST_LOGINS = Duration.ofDays(1);

  /** Checks {@code --chats} and {@code --logins}, naming the option and the value that is wrong. */
  public static void checkCounts(int chats, int logins) {
    checkCount("--chats", chats);
    checkCount("--logins", logins);
  }

  private static void checkCount(String option, int count) {
    if (count < 0 || count > MOST_REQUESTS) {
      throw new CliException(
          option
              + " must be from 0 to "
              + MOST_REQUESTS
              + " (each request is a"
              + " thread and a connection, all at once) but was "
              + count);
    }
  }

  /** Checks {@code --logins-after}. */
  public static void checkLoginsAfter(Duration loginsAfter) {
    if (loginsAfter.isNegative() || loginsAfter.compareTo(LATEST_LOGINS) > 0) {
      throw new CliException(
          "--logins-after must be from 0 to "
              + Durations.format(LATEST_LOGINS)
              + " but was "
              + Durations.format(loginsAfter));
    }
  }

  public LoadGenerator(URI target, int chats, int logins, Duration loginsAfter, Duration timeout) {
    checkCounts(chats, logins);
    checkLoginsAfter(loginsAfter);
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
   * The {@link System#nanoTime()} at which the run's clock started, the moment the chats were let
   * go: every {@link Sample#sentAtNanos()} counts from it. Empty until {@link #run()} gets there.
   */
  public OptionalLong startedAtNanos() {
    return startedAtNanos;
  }

  /**
   * Runs the load and waits for every answer.
   *
   * @throws CliException if nothing listens at the target
   */
  public LoadResult run() {
    String problem = unreachable(target);
    if (problem != null) {
      throw new CliException(
          "nothing answers at "
              + target
              + " ("
              + problem
              + "): start the app"
              + " first with 'app', or run 'demo'");
    }
    // The client's threads exist before the first request: starting threads inside the burst would
    // be measured as latency of the app.
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            CLIENT_THREADS,
            CLIENT_THREADS,
            0,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            DaemonThreads.numbered("load-client-"));
    executor.prestartAllCoreThreads();
    HttpClient client =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build();
    ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
    CountDownLatch chatsGo = new CountDownLatch(1);
    CountDownLatch loginsGo = new CountDownLatch(1);
    long[] start = new long[1];
    List<Thread> senders = new ArrayList<>(chats + logins);
    try {
      // One thread per request, all started before the clock does: a burst that had to start its
      // threads (or hop through the JDK's completion executor, as sendAsync does) would measure the
      // load generator, not the app.
      for (int i = 0; i < chats; i++) {
        senders.add(sender(client, Route.CHAT, chatsGo, start, samples, chatsAnswered, i));
      }
      for (int i = 0; i < logins; i++) {
        senders.add(sender(client, Route.LOGIN, loginsGo, start, samples, loginsAnswered, i));
      }
      start[0] = System.nanoTime();
      startedAtNanos = OptionalLong.of(start[0]);
      chatsGo.countDown();
      long loginsAt = start[0] + loginsAfter.toNanos();
      for (long left; (left = loginsAt - System.nanoTime()) > 0; ) {
        LockSupport.parkNanos(left); // pacing the schedule, not waiting for an event
      }
      loginsGo.countDown();
      for (Thread t : senders) {
        t.join();
      }
      List<Sample> sorted = new ArrayList<>(samples);
      sorted.sort(Comparator.comparingLong(Sample::sentAtNanos));
      long wall = 0;
      for (Sample s : sorted) {
        wall = Math.max(wall, s.answeredAtNanos());
      }
      return new LoadResult(sorted, wall);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("the load was interrupted");
    } finally {
      chatsGo.countDown();
      loginsGo.countDown();
      Threads.shutdown(client, executor);
    }
  }

  private Thread sender(
      HttpClient client,
      Route route,
      CountDownLatch go,
      long[] start,
      ConcurrentLinkedQueue<Sample> samples,
      AtomicInteger answered,
      int index) {
    HttpRequest request =
        HttpRequest.newBuilder(target.resolve(route.path())).timeout(timeout).build();
    // The latency ends when the body's last byte has been read, on the client's own thread.
    HttpResponse.BodyHandler<Long> timed =
        info ->
            HttpResponse.BodySubscribers.mapping(
                HttpResponse.BodySubscribers.discarding(), ignored -> System.nanoTime());
    return DaemonThreads.start(
        "load-" + route.name().toLowerCase(java.util.Locale.ROOT) + "-" + index,
        () -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            return;
          }
          long sent = System.nanoTime();
          long end;
          int status;
          try {
            HttpResponse<Long> response = client.send(request, timed);
            end = response.body();
            status = response.statusCode();
          } catch (IOException e) {
            end = System.nanoTime();
            status = 0;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            end = System.nanoTime();
            status = 0;
          }
          samples.add(new Sample(route, sent - start[0], end - sent, status));
          answered.incrementAndGet();
        });
  }

  /** Why nothing accepts connections at {@code uri} ("Connection refused"), or null if one does. */
  public static String unreachable(URI uri) {
    try (Socket probe = new Socket()) {
      probe.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 2_000);
      return null;
    } catch (IOException e) {
      return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
  }
}
