package io.bulkhead.redis;

import io.bulkhead.internal.DaemonThreads;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One process's connection to the Redis that holds a fleet's leases, and the factory of its
 * compartments.
 *
 * <pre>{@code
 * try (RedisCompartments fleet = RedisCompartments.connect("redis://127.0.0.1:6379")) {
 *   FleetBulkhead llm = fleet.builder("llm").limit(10).maxQueue(20)
 *       .maxWait(Duration.ofSeconds(1)).fallbackToLocalShare(3).build();
 *   String answer = llm.call(() -> client.complete(prompt));
 * }
 * }</pre>
 *
 * <p>Every admitted call holds a lease in Redis for as long as it runs: taken by one atomic script
 * when the call is admitted, given back by another when it ends, and renewed meanwhile by this
 * object's one background thread, in one batched call for all of the process's leases every third
 * of the lease TTL. A process that dies without giving its leases back loses them when they expire,
 * at most one TTL later.
 *
 * <p>{@link #connect(RedisClient, RedisURI)} uses a Lettuce client the application already has, and
 * leaves it open on {@link #close()}.
 *
 * <p>{@code connect} never fails because Redis is unreachable (or refuses the password): the fleet
 * starts, logs a warning, and its compartments admit by their fallback policy until Redis answers.
 * Redis should run with {@code maxmemory-policy noeviction}; a warning is logged at connection when
 * its policy could evict leases.
 *
 * <p>This class is thread-safe. Closing it stops renewals (the leases of calls still running then
 * expire within one TTL) and closes the connections.
 */
public final class RedisCompartments implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");
  private static final AtomicInteger FLEETS = new AtomicInteger();
  private static final int RENEWALS_PER_TTL = 3;

  private final LettuceLeaseStore store;
  private final long leaseTtlMillis;
  private final long pollNanos;
  private final ScheduledThreadPoolExecutor scheduler;
  private final Map<String, RedisBulkhead> compartments = new ConcurrentHashMap<>();

  private RedisCompartments(@Nullable RedisClient given, RedisURI uri, Settings settings) {
    this.leaseTtlMillis = settings.leaseTtl.toMillis();
    this.pollNanos = settings.pollInterval.toNanos();
    int id = FLEETS.incrementAndGet();
    this.scheduler =
        new ScheduledThreadPoolExecutor(1, DaemonThreads.named("bulkhead-redis-" + id));
    scheduler.setRemoveOnCancelPolicy(true);
    // The URI's timeout bounds connecting and the connection's handshake; each command is then held
    // to the shorter command timeout (LettuceLeaseStore sets it on the connection once it is open).
    RedisURI bounded = RedisURI.builder(uri).withTimeout(settings.connectTimeout).build();
    this.store =
        new LettuceLeaseStore(
            given != null ? given : RedisClient.create(bounded),
            given == null,
            bounded,
            settings.connectTimeout,
            settings.commandTimeout,
            settings.pollInterval,
            this::released);
    if (given != null) {
      String departs = LettuceLeaseStore.departsFromBulkheadOptions(given.getOptions());
      if (departs != null) {
        LOG.log(
            Level.WARNING,
            "the Redis client given for "
                + store.where()
                + " keeps Lettuce's"
                + " defaults where a bulkhead needs other options: "
                + departs
                + ". The fleet's commands"
                + " still time out after "
                + settings.commandTimeout.toMillis()
                + " ms, not Lettuce's 60 s;"
                + " see RedisCompartments.connect(RedisClient, RedisURI)");
      }
    }
    boolean connected = store.connectIfNeeded();
    if (!connected) {
      LOG.log(
          Level.WARNING,
          "Redis at "
              + store.where()
              + " does not answer ("
              + store.lastFailure()
              + "): fleet compartments admit by their fallback policy (a local share, or none) until it"
              + " does; trying again every "
              + settings.pollInterval.toMillis()
              + " ms");
    }
    // Opens connections the watchdog closed or that never opened, and retries the subscription.
    scheduler.scheduleWithFixedDelay(
        store::connectIfNeeded, pollNanos, pollNanos, TimeUnit.NANOSECONDS);
    long renewEvery = TimeUnit.MILLISECONDS.toNanos(leaseTtlMillis) / RENEWALS_PER_TTL;
    scheduler.scheduleWithFixedDelay(this::renew, renewEvery, renewEvery, TimeUnit.NANOSECONDS);
    scheduler.scheduleWithFixedDelay(this::poll, pollNanos, pollNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Connects to the Redis at {@code uri} ({@code redis://[password@]host:port[/database]}) with the
   * default settings: leases of 10 seconds, commands that time out after 500 ms, connecting for at
   * most 5 seconds, a poll every second.
   *
   * @throws IllegalArgumentException if {@code uri} is not a Redis URI
   */
  public static RedisCompartments connect(String uri) {
    return settings().connect(uri);
  }

  /**
   * Connects to the Redis at {@code uri} with the default settings; see {@link #connect(String)}.
   */
  public static RedisCompartments connect(RedisURI uri) {
    return settings().connect(uri);
  }

  /**
   * Connects through a Lettuce client the application already has, with the default settings; see
   * {@link Settings#connect(RedisClient, RedisURI)}.
   */
  public static RedisCompartments connect(RedisClient client, RedisURI uri) {
    return settings().connect(client, uri);
  }

  /** Starts choosing settings other than the defaults. */
  public static Settings settings() {
    return new Settings();
  }

  /** Starts building a compartment of this name, whose limit holds across the fleet. */
  public RedisCompartmentBuilder builder(String name) {
    return new RedisCompartmentBuilder(this, name);
  }

  FleetBulkhead register(RedisBulkhead compartment) {
    RedisBulkhead previous = compartments.putIfAbsent(compartment.name(), compartment);
    if (previous != null) {
      throw new IllegalArgumentException(
          "this process already has a fleet compartment named '"
              + compartment.name()
              + "': build it once and share it");
    }
    return compartment;
  }

  LeaseStore store() {
    return store;
  }

  boolean connected() {
    return store.connected();
  }

  long leaseTtlMillis() {
    return leaseTtlMillis;
  }

  void execute(Runnable task) {
    if (!scheduler.isShutdown()) {
      scheduler.execute(task);
    }
  }

  void schedule(Runnable task, long delayNanos) {
    if (!scheduler.isShutdown()) {
      scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  /** Pub/sub, on Lettuce's event loop: a lease of {@code name} was given back somewhere. */
  private void released(String name) {
    RedisBulkhead b = compartments.get(name);
    if (b != null) {
      b.wake();
    }
  }

  /**
   * The slow fallback for lost pub/sub messages and for leases that expired instead of being freed.
   */
  private void poll() {
    for (RedisBulkhead b : compartments.values()) {
      b.serveWaiters();
    }
  }

  /** One round trip renews every lease of this process. */
  private void renew() {
    Map<String, String> epochs = new HashMap<>();
    Map<String, List<LeaseStore.Renewal>> leases = new HashMap<>();
    Map<String, List<RedisBulkhead.FleetLease>> held = new HashMap<>();
    for (RedisBulkhead b : compartments.values()) {
      List<RedisBulkhead.FleetLease> mine = b.leasesToRenew();
      if (mine.isEmpty()) {
        continue;
      }
      List<LeaseStore.Renewal> r = new ArrayList<>(mine.size());
      for (RedisBulkhead.FleetLease l : mine) {
        r.add(new LeaseStore.Renewal(l.id(), l.validForMillis(leaseTtlMillis)));
      }
      epochs.put(b.name(), mine.get(0).epoch());
      leases.put(b.name(), r);
      held.put(b.name(), mine);
    }
    if (leases.isEmpty()) {
      return;
    }
    Map<String, LeaseStore.Renewed> result;
    try {
      result = store.renew(epochs, leases, leaseTtlMillis);
    } catch (StoreUnavailableException e) {
      return; // the compartments notice on their next admission; leases may expire meanwhile
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "renewing leases failed", e); // a periodic task must not die of it
      return;
    }
    result.forEach((name, renewed) -> compartments.get(name).renewed(held.get(name), renewed));
  }

  /** Stops renewals and closes the connections; calls still running keep their slots locally. */
  @Override
  public void close() {
    scheduler.shutdownNow();
    try {
      scheduler.awaitTermination(leaseTtlMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    store.close();
  }

  /**
   * Settings of a connection to Redis, for {@code
   * RedisCompartments.settings().leaseTtl(...).connect(uri)}. This class is <em>not</em>
   * thread-safe.
   */
  public static final class Settings {

    private static final Duration MIN_LEASE_TTL = Duration.ofMillis(300);
    private Duration leaseTtl = Duration.ofSeconds(10);
    private Duration commandTimeout = Duration.ofMillis(500);
    // Connecting is off every caller's path (at start-up, or Lettuce reconnecting in the background
    // while callers are refused at once), and the first connection of a JVM also starts Netty's
    // event
    // loops and loads its classes: more than 500 ms on a busy 2-core host. Five seconds is ten
    // command timeouts, enough for that cold start and a TLS handshake, and still bounds how long
    // connect() blocks on a host that swallows packets.
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration pollInterval = Duration.ofSeconds(1);

    private Settings() {}

    /**
     * How long a lease lives unless renewed: how long a dead process's slots stay taken, at most.
     * Leases are renewed every third of it. At least 300 ms.
     */
    public Settings leaseTtl(Duration leaseTtl) {
      Objects.requireNonNull(leaseTtl, "leaseTtl");
      if (leaseTtl.compareTo(MIN_LEASE_TTL) < 0) {
        throw new IllegalArgumentException(
            "leaseTtl must be at least " + MIN_LEASE_TTL.toMillis() + " ms but was " + leaseTtl);
      }
      this.leaseTtl = leaseTtl;
      return this;
    }

    /**
     * How long one command to Redis may take before the compartment treats Redis as unreachable.
     */
    public Settings commandTimeout(Duration commandTimeout) {
      this.commandTimeout = positive("commandTimeout", commandTimeout);
      return this;
    }

    /**
     * How long opening a connection (TCP, TLS, {@code HELLO}/{@code AUTH}, the subscription) may
     * take before Redis counts as unreachable; 5 seconds by default. It is longer than the command
     * timeout because the first connection of a JVM also starts the network client, which can take
     * more than a command may; callers never wait for it (while disconnected, commands are refused
     * at once).
     */
    public Settings connectTimeout(Duration connectTimeout) {
      this.connectTimeout = positive("connectTimeout", connectTimeout);
      return this;
    }

    /**
     * How often waiters ask Redis again when no release message came (a lease that expired instead
     * of being freed sends none), and how often an unreachable Redis is tried again.
     */
    public Settings pollInterval(Duration pollInterval) {
      this.pollInterval = positive("pollInterval", pollInterval);
      return this;
    }

    /**
     * Connects with these settings; see {@link RedisCompartments#connect(String)}.
     *
     * @throws IllegalArgumentException if {@code uri} is not a Redis URI; the message shows it with
     *     its password masked
     */
    public RedisCompartments connect(String uri) {
      Objects.requireNonNull(uri, "uri");
      return connect(RedisUris.parse("uri", uri));
    }

    /** Connects with these settings; see {@link RedisCompartments#connect(String)}. */
    public RedisCompartments connect(RedisURI uri) {
      Objects.requireNonNull(uri, "uri");
      return new RedisCompartments(null, uri, this);
    }

    /**
     * Connects with these settings through a Lettuce client the application already has, to the
     * Redis at {@code uri} (a client does not say which server it was created for).
     *
     * <p>The fleet opens its own two connections on that client and closes them on {@link
     * #close()}; it never shuts the client down, which stays the application's. It does not change
     * the client's options either, since the application's other connections share them: the
     * command and connect timeouts of these settings still hold (the fleet sets them on its own
     * connections, never waiting Lettuce's 60 s default), but whether commands queue while
     * disconnected, and how many may queue, are the client's. A bulkhead wants them rejected at
     * once and bounded; a warning is logged when the client's options do otherwise (Lettuce's
     * defaults do).
     */
    public RedisCompartments connect(RedisClient client, RedisURI uri) {
      Objects.requireNonNull(client, "client");
      Objects.requireNonNull(uri, "uri");
      return new RedisCompartments(client, uri, this);
    }

    private static Duration positive(String field, Duration value) {
      Objects.requireNonNull(value, field);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(field + " must be positive but was " + value);
      }
      return value;
    }
  }
}
