package io.bulkhead.scenarios;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.micrometer.DatabasePoolMetrics;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/*
 * Concurrency: opened() and closing() run on the experiment's thread, one run after the other; the
 * routes are served on Jetty's threads; close() may run on a shutdown hook. `meters` is a
 * ConcurrentHashMap, so close() closes whatever binder is still there, and a binder closed twice
 * (by closing() and by close()) is closed once in effect (DatabasePoolMetrics.close is idempotent).
 */

/**
 * {@code demo db --dashboard}: {@code /dashboard}, {@code /bulkheads} and {@code /metrics} for the
 * compartments of the experiment's pools, on a loopback server of their own. Each run's pools join
 * the registry when they open and leave it when they close, so the page shows the shared pool
 * during the first run and the checkout and reports pools during the second, each card with its
 * pool's connections; {@code /metrics} has the compartments' meters and the pools' gauges ({@link
 * DatabasePoolMetrics}) for as long as the pools are open.
 */
public final class DbDashboard implements CheckoutVsReports.Watch, AutoCloseable {

  private final BulkheadRegistry registry = BulkheadRegistry.create();
  private final Observability observability = new Observability(registry);
  private final PoolResources pools = new PoolResources();
  private final ConcurrentHashMap<DatabasePools, DatabasePoolMetrics> meters =
      new ConcurrentHashMap<>();
  private final DashboardServer server;

  private DbDashboard(int port) {
    observability.add(pools);
    try {
      this.server = DashboardServer.start(observability, port);
    } catch (RuntimeException e) {
      observability.close();
      throw e;
    }
  }

  /**
   * Serves the dashboard on 127.0.0.1:{@code port} (0: any free port).
   *
   * @throws CliException if the port is in use
   */
  public static DbDashboard start(int port) {
    return new DbDashboard(port);
  }

  /** Where the page is: {@code http://127.0.0.1:port}. */
  public URI uri() {
    return server.uri();
  }

  @Override
  public BulkheadRegistry registry() {
    return registry;
  }

  @Override
  public void opened(DatabasePools opened) {
    pools.track(opened);
    DatabasePoolMetrics gauges = DatabasePoolMetrics.of(opened);
    meters.put(opened, gauges);
    gauges.bindTo(observability.meters());
  }

  @Override
  public void closing(DatabasePools closing) {
    pools.untrack(closing);
    DatabasePoolMetrics gauges = meters.remove(closing);
    if (gauges != null) {
      gauges.close();
    }
  }

  /**
   * Waits until a page (or anything else) has asked {@code /bulkheads}, at most {@code limit}.
   *
   * @return whether it was asked in time
   */
  public boolean awaitFirstLook(Duration limit) throws InterruptedException {
    return server.awaitFirstLook(limit);
  }

  /** Waits until the server stops or this thread is interrupted (Ctrl-C). */
  public void join() throws InterruptedException {
    server.join();
  }

  @Override
  public void close() {
    server.close();
    List<DatabasePoolMetrics> left = new ArrayList<>(meters.values());
    meters.clear();
    left.forEach(DatabasePoolMetrics::close);
    observability.close();
  }
}
