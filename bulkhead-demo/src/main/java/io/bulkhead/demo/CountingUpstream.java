package io.bulkhead.demo;

import io.bulkhead.scenarios.CliException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/*
 * The slow upstream of demo fleet, and its oracle: it counts the calls it is working on itself, so
 * the maximum it reports owes nothing to the library under test.
 *
 * One loopback connector per app process: the port a call arrives on says which app sent it. A call
 * counts from the moment its request is handled until its answer is due and starts being written
 * (the answer is scheduled `delay` later, holding no thread), not until the write completes: the app
 * may have read the answer and released its lease before the write's callback runs. A call of an app killed with
 * SIGKILL therefore stays counted until its answer is due: the upstream goes on working on it, as a
 * provider would, and the oracle must not forget it. (This is why FleetCommand keeps the delay at
 * most half a lease TTL: the killed app's leases outlive its calls here.)
 *
 * Reclaim. markKill(victim) records when a victim was killed and how many calls it had here, k.
 * Each of those k calls holds a lease at the kill, and a dead process's leases only go by expiring;
 * while they all live, the survivors (every app but the victim) can hold at most limit - k leases,
 * so at most limit - k calls here. From the kill on, every arrival checks the survivors' count: the
 * first time it exceeds limit - k, one of the victim's slots is in use by the others again (first
 * back); the first time it reaches the limit, all of them are (all back). Arrivals are the only
 * moments the survivors' count rises, so checking there sees the first such instants. All back
 * needs the survivors to fill every slot at one instant, which a busy machine may not manage in
 * a short run; first back does not.
 *
 * Invariants, under `lock`: inFlight[i] >= 0 and total == sum(inFlight); maxTotal >= every total
 * ever reached; firstBackAt and allBackAt are set at most once each, after killedAt. The lock is held for a few integer
 * updates per call (a few calls a second): nothing waits on it for long, and no callback runs under
 * it.
 *
 * Races, as interleavings:
 *   R1 arrival vs answer of another call: both take the lock; the total seen by the arrival is
 *      exact at that instant, so maxTotal is the true maximum of the counts the upstream held.
 *   R2 markKill vs an arrival from the victim just before the kill: if the arrival takes the lock
 *      first, it counts in the victim's calls at the kill; if after, it is still the victim's (its
 *      port says so) and never counts as a survivor's.
 */
final class CountingUpstream implements AutoCloseable {

  private static final String ANSWER = "a slow answer\n";

  private final Server server;
  private final List<ServerConnector> connectors = new ArrayList<>();
  private final int limit;
  private final ReentrantLock lock = new ReentrantLock();
  private final int[] inFlight;
  private int total;
  private int maxTotal;
  private long calls;
  private int victim = -1;
  private long killedAt;
  private int victimCallsAtKill;
  private long firstBackAt;
  private boolean firstBack;
  private long allBackAt;
  private boolean allBack;

  /**
   * Starts an upstream answering every call after {@code delay}, with one loopback port per app;
   * {@code limit} is the fleet's limit, against which the reclaim is judged.
   */
  CountingUpstream(int apps, Duration delay, int limit) {
    this.limit = limit;
    this.inFlight = new int[apps];
    QueuedThreadPool threads = new QueuedThreadPool(64, 4);
    threads.setName("fleet-upstream");
    this.server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setIdleTimeout(delay.plusSeconds(60).toMillis()); // an answer pending for the whole delay
    for (int i = 0; i < apps; i++) {
      ServerConnector connector =
          new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      connector.setAcceptQueueSize(1024);
      server.addConnector(connector);
      connectors.add(connector);
    }
    long delayNanos = delay.toNanos();
    server.setHandler(
        new Handler.Abstract.NonBlocking() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            int app =
                connectors.indexOf(
                    (ServerConnector) request.getConnectionMetaData().getConnector());
            arrived(app);
            request
                .getComponents()
                .getScheduler()
                .schedule(
                    () -> {
                      // The work on this call ends when its answer is due: count it down before
                      // writing. Counting
                      // until the write's callback ran would count a call the app was already
                      // answered for: the
                      // callback can run after the app read the answer, gave its lease back and
                      // another app's
                      // next call arrived here, which showed 11 calls against a limit of 10 on a
                      // busy machine.
                      done(app);
                      response
                          .getHeaders()
                          .put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
                      Content.Sink.write(response, true, ANSWER, callback);
                    },
                    delayNanos,
                    TimeUnit.NANOSECONDS);
            return true;
          }
        });
    server.setStopTimeout(0);
    try {
      server.start();
    } catch (Exception e) {
      close();
      throw new CliException("cannot start the upstream: " + e.getMessage(), e);
    }
  }

  /** The address app {@code app} (from 0) calls. */
  URI uri(int app) {
    return URI.create("http://127.0.0.1:" + connectors.get(app).getLocalPort());
  }

  private void arrived(int app) {
    lock.lock();
    try {
      inFlight[app]++;
      total++;
      calls++;
      maxTotal = Math.max(maxTotal, total);
      if (victim >= 0 && app != victim) {
        int survivors = total - inFlight[victim];
        if (!firstBack && survivors > limit - victimCallsAtKill) {
          firstBackAt = System.nanoTime();
          firstBack = true;
        }
        if (!allBack && survivors >= limit) {
          allBackAt = System.nanoTime();
          allBack = true;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private void done(int app) {
    lock.lock();
    try {
      inFlight[app]--;
      total--;
    } finally {
      lock.unlock();
    }
  }

  /** The calls of app {@code app} the upstream works on now. */
  int inFlight(int app) {
    lock.lock();
    try {
      return inFlight[app];
    } finally {
      lock.unlock();
    }
  }

  /** The most calls the upstream worked on at once, from all apps. */
  int maxConcurrency() {
    lock.lock();
    try {
      return maxTotal;
    } finally {
      lock.unlock();
    }
  }

  /** Every call that arrived. */
  long calls() {
    lock.lock();
    try {
      return calls;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Marks app {@code app} as killed now (call it just before the kill); returns how many of its
   * calls the upstream works on.
   */
  int markKill(int app) {
    lock.lock();
    try {
      victim = app;
      killedAt = System.nanoTime();
      victimCallsAtKill = inFlight[app];
      return victimCallsAtKill;
    } finally {
      lock.unlock();
    }
  }

  /**
   * From the kill until the survivors had more calls here than they could while every lease of the
   * victim's calls lived, if they had: the first of the victim's slots was in use again.
   */
  OptionalLong firstBackNanos() {
    lock.lock();
    try {
      return firstBack ? OptionalLong.of(firstBackAt - killedAt) : OptionalLong.empty();
    } finally {
      lock.unlock();
    }
  }

  /** From the kill until the survivors had {@code limit} calls here at once, if they had. */
  OptionalLong allBackNanos() {
    lock.lock();
    try {
      return allBack ? OptionalLong.of(allBackAt - killedAt) : OptionalLong.empty();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      System.getLogger("io.bulkhead.demo")
          .log(System.Logger.Level.DEBUG, "stopping the upstream", e);
    }
  }
}
