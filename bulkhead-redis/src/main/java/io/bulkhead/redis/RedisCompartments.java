package io.bulkhead.redis;

import io.bulkhead.internal.DaemonThreads;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One process's connection to the Redis that holds a fleet's leases, and the factory of its
 * compartments.
 *
 * <pre>{@code
 * try (RedisCompartments fleet = RedisCompartments.connect("redis://127.0.0.1:6379")) {
 *   FleetBulkhead llm = fleet.builder("llm").limit(10).maxQueue(20)
 *       .maxWait(Duration.ofSeconds(1)).maxCallDuration(Duration.ofSeconds(30)).build();
 *   String answer = llm.call(() -> client.complete(prompt));
 * }
 * }</pre>
 *
 * <p>Each process holds a lease on a batch of each compartment's slots, sized by its recent demand,
 * and admits and releases its calls against it in memory. One background thread per {@code
 * RedisCompartments} syncs every lease with Redis every {@linkplain Settings#rebalanceInterval
 * rebalance interval} (one script round trip per compartment): it reports the demand, gives back
 * what the process does not use, and takes what the others leave, up to a fair share; the batches
 * add up to at most the limit at every instant. A caller never waits for Redis. A process that dies
 * loses its slots one lease TTL plus the compartment's {@code maxCallDuration} after its last sync.
 *
 * <p>{@link #connect(RedisClient, RedisURI)} uses a Lettuce client the application already has, and
 * leaves it open on {@link #close()}.
 *
 * <p>{@code connect} never fails because Redis is unreachable (or refuses the password): the fleet
 * starts, logs a warning, and its compartments admit by their fallback policy until Redis answers.
 * Redis should run with {@code maxmemory-policy noeviction}; a warning is logged at connection when
 * its policy could evict the fleet's keys.
 *
 * <p>This class is thread-safe. Closing it gives back the slots no call uses, refuses the calls
 * waiting, admits nothing more, and closes the connections.
 */
public final class RedisCompartments implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");
  private static final AtomicInteger FLEETS = new AtomicInteger();
  private static final int TICKS_PER_INTERVAL = 4;

  private final String member = UUID.randomUUID().toString();
  private final LettuceLeaseStore store;
  private final long leaseTtlMillis;
  private final long intervalMillis;
  private final long intervalNanos;
  private final long firstSyncNanos;
  // Every round trip to Redis, one at a time; no user code, no timer.
  private final ScheduledThreadPoolExecutor syncThread;
  // Waiters' time-outs and lease lapses; never a round trip to Redis, never user code.
  private final ScheduledThreadPoolExecutor timer;
  private final Map<String, RedisBulkhead> compartments = new ConcurrentHashMap<>();
  private long lastConnectAttempt; // confined to the sync thread

  private RedisCompartments(@Nullable RedisClient given, RedisURI uri, Settings settings) {
    this.leaseTtlMillis = settings.leaseTtl.toMillis();
    this.intervalMillis = settings.rebalanceInterval.toMillis();
    this.intervalNanos = settings.rebalanceInterval.toNanos();
    // connecting, then a sync (EVALSHA and EVAL after a NOSCRIPT, and a publish of the limit)
    this.firstSyncNanos =
        settings.connectTimeout.plus(settings.commandTimeout.multipliedBy(4)).toNanos();
    int id = FLEETS.incrementAndGet();
    this.syncThread = daemon("bulkhead-redis-sync-" + id);
    this.timer = daemon("bulkhead-redis-timer-" + id);
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
            settings.rebalanceInterval,
            this::announced);
    if (given != null) {
      String departs = LettuceLeaseStore.departsFromBulkheadOptions(given.getOptions());
      if (departs != null) {
        LOG.log(
            Level.WARNING,
            "the Redis client given for "
                + store.where()
                + " keeps Lettuce's defaults where a bulkhead needs other options: "
                + departs
                + ". The fleet's commands still time out after "
                + settings.commandTimeout.toMillis()
                + " ms, not Lettuce's 60 s; see RedisCompartments.connect(RedisClient, RedisURI)");
      }
    }
    boolean connected = store.connectIfNeeded();
    lastConnectAttempt = System.nanoTime();
    if (!connected) {
      LOG.log(
          Level.WARNING,
          "Redis at "
              + store.where()
              + " does not answer ("
              + store.lastFailure()
              + "): fleet compartments admit by their fallback policy (a local share, or none) until it"
              + " does; trying again every "
              + intervalMillis
              + " ms");
    }
    long tick = intervalNanos / TICKS_PER_INTERVAL;
    syncThread.scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.NANOSECONDS);
  }

  private static ScheduledThreadPoolExecutor daemon(String name) {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(1, DaemonThreads.named(name));
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /**
   * Connects to the Redis at {@code uri} ({@code redis://[password@]host:port[/database]}) with the
   * default settings: a lease TTL of 10 seconds, a sync every second, commands that time out after
   * 500 ms, connecting for at most 5 seconds.
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

  /** Adds a compartment and syncs it once (start-up: the builder's thread waits, bounded). */
  FleetBulkhead register(RedisBulkhead compartment) {
    RedisBulkhead previous = compartments.putIfAbsent(compartment.name(), compartment);
    if (previous != null) {
      throw new IllegalArgumentException(
          "this process already has a fleet compartment named '"
              + compartment.name()
              + "': build it once and share it");
    }
    String failure = "the fleet is closed";
    try {
      Future<Long> first = syncThread.submit(() -> syncOne(compartment));
      if (first.get(firstSyncNanos, TimeUnit.NANOSECONDS) == 0) {
        failure = store.connected() ? "its first sync timed out" : store.lastFailure();
      } else {
        failure = null;
      }
    } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
      failure = "its first sync did not finish";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = "interrupted while it synced";
    }
    if (failure != null) {
      compartment.startedInFallback(failure);
    }
    return compartment;
  }

  LeaseStore store() {
    return store;
  }

  String member() {
    return member;
  }

  boolean connected() {
    return store.connected();
  }

  long leaseTtlMillis() {
    return leaseTtlMillis;
  }

  long intervalMillis() {
    return intervalMillis;
  }

  /** Runs {@code task} on the timer thread after {@code delayNanos}, unless the fleet is closed. */
  @Nullable ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    try {
      return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null; // closed: the waiters were refused by close
    }
  }

  /** Syncs {@code compartment} soon, on the sync thread; requests while one is pending coalesce. */
  void requestSync(RedisBulkhead compartment) {
    if (compartment.syncRequested.compareAndSet(false, true)) {
      try {
        syncThread.execute(
            () -> {
              if (compartment.syncRequested.getAndSet(false)) {
                syncOne(compartment);
              }
            });
      } catch (RejectedExecutionException e) {
        // closed
      }
    }
  }

  /** Pub/sub, on Lettuce's event loop: another member freed slots or wants more ("MEMBER NAME"). */
  private void announced(String message) {
    int space = message.indexOf(' ');
    if (space < 0 || message.regionMatches(0, member, 0, space)) {
      return; // malformed, or this process's own
    }
    RedisBulkhead b = compartments.get(message.substring(space + 1));
    if (b != null) {
      requestSync(b);
    }
  }

  /** The sync thread's beat: connection upkeep, and the syncs that are due. */
  private void tick() {
    try {
      long now = System.nanoTime();
      if (store.connected() || now - lastConnectAttempt >= intervalNanos) {
        lastConnectAttempt = now;
        store.connectIfNeeded(); // also retries a refused subscription after its back-off
      }
      for (RedisBulkhead b : compartments.values()) {
        if (b.syncDue(now)) {
          syncOne(b);
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, "a fleet sync failed", e); // a periodic task must not die of it
    }
  }

  /** One sync of {@code b}; sets the timer to its lapse. Returns its lease's admitUntil, or 0. */
  private long syncOne(RedisBulkhead b) {
    long until = b.sync();
    if (until != 0 && b.owesSlots()) {
      until = b.sync(); // gives back at once what another process is waiting for
    }
    if (until != 0) {
      b.lapseAt(until);
    }
    return until;
  }

  /**
   * Gives back the slots no call uses (the records of calls still running expire one term later),
   * refuses the calls waiting, admits nothing more in any compartment, and closes the connections.
   */
  @Override
  public void close() {
    try {
      syncThread
          .submit(
              () -> {
                for (RedisBulkhead b : compartments.values()) {
                  b.closeLease();
                }
              })
          .get(firstSyncNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
      // closed already, or Redis does not answer: the records expire by themselves
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    syncThread.shutdownNow();
    timer.shutdownNow();
    try {
      syncThread.awaitTermination(firstSyncNanos, TimeUnit.NANOSECONDS);
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
    // Connecting is off every caller's path (at start-up, or on the sync thread), and the first
    // connection of a JVM also starts Netty's event loops and loads its classes: more than 500 ms
    // on
    // a busy 2-core host. Five seconds is ten command timeouts, enough for that cold start and a
    // TLS
    // handshake, and still bounds how long connect() blocks on a host that swallows packets.
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration rebalanceInterval = Duration.ofSeconds(1);

    private Settings() {}

    /**
     * How long a process keeps admitting by its lease after the last sync Redis answered: how long
     * Redis may be slow or unreachable before the process switches to its fallback policy. A dead
     * process's slots come back this long plus the compartment's {@code maxCallDuration} after its
     * last sync. At least 300 ms, and at least three rebalance intervals; 10 seconds by default.
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
     * How often each process syncs each of its leases with Redis (one script round trip): reports
     * its demand, gives back what it does not use, takes what the others leave. A process that
     * wants more than it holds, or whose calls found no slot, syncs four times as often, and,
     * unless Redis refuses SUBSCRIBE, at once when another process announces freed slots. Also how
     * often an unreachable Redis is tried again. 1 second by default.
     */
    public Settings rebalanceInterval(Duration rebalanceInterval) {
      this.rebalanceInterval = positive("rebalanceInterval", rebalanceInterval);
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
      checkTogether();
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
      checkTogether();
      return new RedisCompartments(client, uri, this);
    }

    private void checkTogether() {
      if (leaseTtl.compareTo(rebalanceInterval.multipliedBy(3)) < 0) {
        throw new IllegalArgumentException(
            "leaseTtl "
                + leaseTtl.toMillis()
                + " ms must be at least three rebalanceInterval ("
                + rebalanceInterval.toMillis()
                + " ms): a process syncs every interval, and its lease must outlast a failed sync"
                + " or two");
      }
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
