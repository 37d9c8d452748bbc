package io.bulkhead.benchmarks.peer;

import io.bulkhead.BulkheadStats;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Mode;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.net.URI;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * The demo's app in one {@link Variant}, started on a loopback port, with a probe that reads what
 * the experiment charts.
 *
 * <ul>
 *   <li>{@link Variant#BULKHEAD}: the demo's bulkhead mode, unchanged. A chat that waits in the
 *       {@code llm} compartment's queue has already passed the server-wide cap, so the
 *       compartment's {@code waiting} count is the number of server slots held by waiting chats.
 *   <li>{@link Variant#RESILIENCE4J}: the demo's app without a compartment of ours on {@code /chat}
 *       (shared mode, whose own /chat handler and client are then never used), its {@code /chat}
 *       replaced by {@link Resilience4jChat}: a {@code SemaphoreBulkhead} with the same limit and
 *       the same maximum wait, and no bound on waiters because it has none.
 * </ul>
 *
 * In both, the server-wide cap is the demo's {@code server} compartment and its {@code waiting}
 * count is the number of requests queued for a server slot.
 *
 * <p>In both, Jetty's thread pool is grown to {@link #threadsFor} threads once the app has started,
 * as on a server that has been serving traffic. Resilience4j parks one Jetty thread per waiting
 * chat; a cold pool would create those threads during the burst, one after another, which on a
 * loaded machine delays when the waiters start waiting, and so when their maximum wait ends, for a
 * reason that is Jetty's and not the bulkhead's. Our variant needs few threads and is not affected.
 */
final class PeerApp implements AutoCloseable {

  private final App app;
  private final io.bulkhead.Compartment server;
  private final io.bulkhead.Compartment llm; // BULKHEAD only
  private final Resilience4jChat r4jChat; // RESILIENCE4J only

  private PeerApp(Variant variant, DemoSettings settings, URI upstream) {
    if (variant == Variant.BULKHEAD) {
      app = new App(settings.app(Mode.BULKHEAD, upstream));
      llm = app.registry().bulkhead("llm").orElseThrow();
      r4jChat = null;
    } else {
      app = new App(settings.app(Mode.SHARED, upstream));
      llm = null;
      io.github.resilience4j.bulkhead.Bulkhead bulkhead =
          io.github.resilience4j.bulkhead.Bulkhead.of(
              "llm",
              BulkheadConfig.custom()
                  .maxConcurrentCalls(settings.llmLimit())
                  .maxWaitDuration(settings.llmWait())
                  .build());
      r4jChat = new Resilience4jChat(bulkhead, upstream, settings.upstreamDeadline());
      app.replaceRoute("/chat", r4jChat);
    }
    server = app.registry().bulkhead("server").orElseThrow();
  }

  /** Builds the app for {@code variant} against {@code upstream} and starts it on a free port. */
  static PeerApp start(Variant variant, DemoSettings settings, URI upstream) {
    PeerApp p = new PeerApp(variant, settings, upstream);
    try {
      p.app.start(0);
      p.app.growThreadPool(threadsFor(settings));
    } catch (RuntimeException e) {
      p.close();
      throw e;
    }
    return p;
  }

  /**
   * The Jetty threads started before the load: one per server slot, for a handler that blocks in
   * each, and a few for the acceptor, the selector and Jetty's reserved threads.
   */
  static int threadsFor(DemoSettings settings) {
    return settings.serverLimit() + 16;
  }

  URI uri() {
    return app.uri();
  }

  /** What the app holds now, stamped {@code nowNanos}. */
  Timeline.Point sample(long nowNanos) {
    BulkheadStats s = server.stats();
    int waitingChats;
    int callingChats;
    if (llm != null) {
      BulkheadStats l = llm.stats();
      waitingChats = l.waiting();
      callingChats = l.inFlight();
    } else {
      waitingChats = r4jChat.waiting();
      callingChats = r4jChat.calling();
    }
    return new Timeline.Point(nowNanos, waitingChats, callingChats, s.inFlight(), s.waiting());
  }

  @Override
  public void close() {
    app.close();
    if (r4jChat != null) {
      r4jChat.close();
    }
  }

  /** The demo's app, with its Jetty thread pool in reach. */
  private static final class App extends DemoApp {
    App(AppSettings settings) {
      super(settings);
    }

    /**
     * Starts threads until the pool holds at least {@code threads}; they stay for the whole run (a
     * pool never shrinks below its minimum).
     *
     * @throws IllegalStateException if the server's pool is not Jetty's QueuedThreadPool, or did
     *     not grow
     */
    void growThreadPool(int threads) {
      ThreadPool pool = server().getThreadPool();
      if (!(pool instanceof QueuedThreadPool)) {
        throw new IllegalStateException(
            "the app's thread pool is a "
                + pool.getClass().getName()
                + ", not Jetty's QueuedThreadPool");
      }
      QueuedThreadPool q = (QueuedThreadPool) pool;
      if (q.getMinThreads() < threads) {
        q.setMinThreads(threads); // starts the missing threads before it returns
      }
      if (q.getThreads() < threads) {
        throw new IllegalStateException(
            "the app's thread pool has " + q.getThreads() + " threads after asking for " + threads);
      }
    }
  }
}
