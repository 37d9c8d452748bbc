package io.bulkhead.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.internal.Urls;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The connection pools of one database, one per workload, sized so that together they fit what the
 * server allows. Each workload gets its own {@link WorkloadPool} with its own limit and a
 * compartment in front that refuses at once, or after a short wait, when all its connections are in
 * use: a slow report query exhausts only the reports pool, never checkout's.
 *
 * <pre>{@code
 * DatabasePools db = DatabasePools.builder("orders")
 *     .jdbcUrl("jdbc:postgresql://db:5432/orders")
 *     .username("app").password(secret)
 *     .reserve(10)                      // psql, migrations, the other instances
 *     .pool(PoolConfig.builder("checkout").limit(6).maxQueue(40).maxWait(Duration.ofSeconds(1)).build())
 *     .pool(PoolConfig.builder("reports").limit(4).build())
 *     .open();
 * DataSource checkout = db.pool("checkout");
 * }</pre>
 *
 * <p><b>The budget.</b> The pools draw on one {@link Budget} named after the database, of capacity
 * {@link Builder#capacity} or else all the server allows (on PostgreSQL {@code max_connections}
 * less {@code superuser_reserved_connections}, {@code reserved_connections} and {@link
 * Builder#reserve}). Pools that add up to more fail {@link Builder#open()} with the arithmetic;
 * resizing a pool through its compartment later is checked against the same budget.
 *
 * <p><b>A total that changes.</b> {@link Builder#total(IntSupplier)} lets the pools hold what a
 * supplier says (a fleet budget's share), divided by the proportions of their limits; {@link
 * #resize()} reads it again. The budget's capacity stays the ceiling of every total.
 *
 * <p><b>Start-up.</b> {@code open()} reads the server's limit over one short-lived connection and
 * opens every connection of every pool, so an unreachable database, refused credentials or a full
 * server fail there with an {@link SQLException} naming the cause, not later under load.
 *
 * <p>This class is thread-safe.
 */
/*
 * Resizing to a total (resize(), resize(int))
 * -------------------------------------------
 * `resizing` serialises resizes; each pool's own setLimit keeps HikariCP and its gate in step (see
 * WorkloadPool). Within one resize the pools that shrink go first, so the budget never refuses a pool
 * that grows into room another is about to give back, and the pools never hold more than the larger
 * of the old and the new total. No user code runs under `resizing` except the total supplier, which
 * resize() reads under it on purpose:
 *   R1 two resize() calls. The supplier drops from 5 to 3 and its owner calls resize() while another
 *      thread's resize() read 5 and is applying it: the owner's call waits, then reads 3 and applies
 *      it, so the pools end at the latest value. A read outside the lock could apply 5 last.
 *   R2 resize vs close. close() does not take `resizing`: a resize racing it gets the closed pool's
 *      IllegalStateException from setLimit, and the pools are closed either way.
 *   R3 resize vs a user's setLimit on one pool. The budget may then refuse a growth (the user took
 *      the room): that pool's setLimit throws, the pools already resized stay resized, and the
 *      exception reaches the caller of resize.
 */
public final class DatabasePools implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.jdbc");

  private final String name;
  private final Budget budget;
  private final ServerLimit serverLimit; // null when the server's limit was not read
  private final Map<String, WorkloadPool> pools; // by workload name, in the order given
  private final BulkheadRegistry registry; // null when none was given
  private final IntSupplier total; // null unless Builder.total was given
  private final AtomicBoolean closed = new AtomicBoolean();
  // Serialises resize() calls, so the last one applies the supplier's latest value (see resize()).
  private final ReentrantLock resizing = new ReentrantLock();

  private DatabasePools(
      String name,
      Budget budget,
      ServerLimit serverLimit,
      Map<String, WorkloadPool> pools,
      BulkheadRegistry registry,
      IntSupplier total) {
    this.name = name;
    this.budget = budget;
    this.serverLimit = serverLimit;
    this.pools = pools;
    this.registry = registry;
    this.total = total;
  }

  /** Starts describing the pools of the database called {@code name} ("orders"). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The database's name, as given to {@link #builder(String)}. */
  public String name() {
    return name;
  }

  /**
   * The budget the pools draw on; its capacity is the number of connections they may hold together.
   */
  public Budget budget() {
    return budget;
  }

  /** The server's limit as read at start-up; empty when it was not read (not PostgreSQL). */
  public Optional<ServerLimit> serverLimit() {
    return Optional.ofNullable(serverLimit);
  }

  /**
   * Returns the pool of the workload called {@code workload}.
   *
   * @throws IllegalArgumentException if there is none, naming the workloads there are
   */
  public WorkloadPool pool(String workload) {
    WorkloadPool pool = pools.get(workload);
    if (pool == null) {
      throw new IllegalArgumentException(
          "database '"
              + name
              + "' has no pool named '"
              + workload
              + "'; its pools are "
              + pools.keySet());
    }
    return pool;
  }

  /** The pools, in the order they were given to the builder. */
  public List<WorkloadPool> pools() {
    return List.copyOf(pools.values());
  }

  /** A snapshot of every pool, in the order they were given to the builder. */
  public List<PoolStats> stats() {
    List<PoolStats> stats = new ArrayList<>(pools.size());
    for (WorkloadPool pool : pools.values()) {
      stats.add(pool.stats());
    }
    return stats;
  }

  /**
   * Reads the total from {@link Builder#total(IntSupplier)} again and resizes the pools to it; see
   * {@link #resize(int)}. Calls are serialised and each reads the supplier after the previous one
   * finished, so when a supplier's value drops and its owner then calls this, the pools end at the
   * new value even if another thread is resizing at the same time: a listener can call it as it is.
   *
   * @throws IllegalStateException if no total supplier was given, or the pools are closed
   * @throws IllegalArgumentException as {@link #resize(int)} does
   */
  public void resize() {
    if (total == null) {
      throw new IllegalStateException(
          "database '"
              + name
              + "' has no total supplier: give one with"
              + " DatabasePools.Builder.total(IntSupplier), or call resize(int)");
    }
    resizing.lock();
    try {
      resize(total.getAsInt());
    } finally {
      resizing.unlock();
    }
  }

  /**
   * Resizes the pools so that together they hold {@code total} connections, divided by the
   * proportions of their configured sizes (largest remainders first, ties to the pool given first;
   * every pool keeps at least one). Pools that shrink do so before any grows, so the pools never
   * hold more than the larger of the old and the new total together. Connections in use when their
   * pool shrinks are closed when they are given back; a pool that grows opens its new connections
   * when they are first asked for (or at HikariCP's next housekeeping).
   *
   * @throws IllegalArgumentException if {@code total} is less than the number of pools (every pool
   *     is then shrunk to one connection first, the nearest this class can come, and the pools hold
   *     more than {@code total}: a fleet budget that may ask for so little needs a {@code
   *     minimumShare} of the number of pools) or more than the budget's capacity (nothing changes)
   * @throws IllegalStateException if the pools are closed
   */
  public void resize(int total) {
    if (total > budget.capacity()) {
      throw new IllegalArgumentException(
          "total of database '"
              + name
              + "' cannot be "
              + total
              + ": its capacity is "
              + budget.capacity()
              + " ("
              + budgetSource()
              + ")");
    }
    resizing.lock();
    try {
      if (closed.get()) {
        throw new IllegalStateException(
            "pools of database '" + name + "' are closed; they cannot" + " be resized");
      }
      List<WorkloadPool> list = List.copyOf(pools.values());
      int[] sizes = new int[list.size()];
      if (total < list.size()) {
        Arrays.fill(sizes, 1);
      } else {
        int[] weights = new int[list.size()];
        for (int i = 0; i < weights.length; i++) {
          weights[i] = list.get(i).config().limit();
        }
        sizes = divide(total, weights);
      }
      for (int i = 0; i < sizes.length; i++) {
        if (sizes[i] < list.get(i).compartment().config().limit()) {
          list.get(i).compartment().setLimit(sizes[i]);
        }
      }
      for (int i = 0; i < sizes.length; i++) {
        if (sizes[i] > list.get(i).compartment().config().limit()) {
          list.get(i).compartment().setLimit(sizes[i]);
        }
      }
      if (total < list.size()) {
        throw new IllegalArgumentException(
            "total of database '"
                + name
                + "' cannot be "
                + total
                + ": its "
                + list.size()
                + " pools need at least one connection each; they hold one each");
      }
    } finally {
      resizing.unlock();
    }
  }

  private String budgetSource() {
    return serverLimit == null ? "set by capacity(int)" : serverLimit.explain();
  }

  /**
   * Divides {@code total} (at least {@code weights.length}) in proportion to {@code weights}: each
   * gets the floor of its exact part, the rest go one each to the largest remainders (ties to the
   * earlier), then any part that came out 0 takes one from the largest part. The parts add up to
   * {@code total}; when the weights add up to the total, the parts are the weights.
   */
  static int[] divide(int total, int[] weights) {
    long sum = 0;
    for (int w : weights) {
      sum += w;
    }
    int[] parts = new int[weights.length];
    long[] remainders = new long[weights.length];
    int given = 0;
    for (int i = 0; i < weights.length; i++) {
      long exact = (long) total * weights[i];
      parts[i] = (int) (exact / sum);
      remainders[i] = exact % sum;
      given += parts[i];
    }
    for (; given < total; given++) {
      int best = 0;
      for (int i = 1; i < weights.length; i++) {
        if (remainders[i] > remainders[best]) {
          best = i;
        }
      }
      parts[best]++;
      remainders[best] = -1; // at most one extra each: the rest is less than the number of parts
    }
    for (int i = 0; i < parts.length; i++) {
      if (parts[i] == 0) {
        int largest = 0;
        for (int j = 1; j < parts.length; j++) {
          if (parts[j] > parts[largest]) {
            largest = j;
          }
        }
        parts[largest]--;
        parts[i] = 1;
      }
    }
    return parts;
  }

  /**
   * Closes every pool and removes its compartment from the registry, if one was given. Connections
   * still in use are aborted by HikariCP; close them before, when you can. Calling it again does
   * nothing.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (WorkloadPool pool : pools.values()) {
      pool.close();
      if (registry != null) {
        registry.remove(pool.qualifiedName());
      }
    }
  }

  @Override
  public String toString() {
    return "DatabasePools{" + name + ", budget=" + budget + ", pools=" + pools.values() + "}";
  }

  /**
   * Describes the pools of one database; {@link #open()} opens them. Each setter checks its own
   * argument and throws {@link IllegalArgumentException} naming the field and the value.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private final String name;
    private String jdbcUrl;
    private String username;
    private String password;
    private final Properties properties = new Properties();
    private int reserve;
    private int capacity; // 0 until set: then the server's usable limit
    private IntSupplier total; // null unless set: then the pools hold the configured limits
    private BulkheadRegistry registry;
    private Consumer<HikariConfig> hikari = config -> {};
    private final LinkedHashMap<String, PoolConfig> pools = new LinkedHashMap<>();

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException(
            "database name must not be blank but was '" + name + "'");
      }
      this.name = name;
    }

    /**
     * Sets the JDBC URL of the database, e.g. {@code jdbc:postgresql://127.0.0.1:5432/orders}.
     *
     * @throws IllegalArgumentException if it does not start with {@code jdbc:}
     */
    public Builder jdbcUrl(String jdbcUrl) {
      Objects.requireNonNull(jdbcUrl, "jdbcUrl");
      if (!jdbcUrl.startsWith("jdbc:")) {
        throw new IllegalArgumentException(
            "jdbcUrl of database '"
                + name
                + "' must start with 'jdbc:' but was '"
                + Urls.masked(jdbcUrl)
                + "'");
      }
      this.jdbcUrl = jdbcUrl;
      return this;
    }

    /** Sets the user the pools connect as; without it, the URL or the driver's default decides. */
    public Builder username(String username) {
      this.username = Objects.requireNonNull(username, "username");
      return this;
    }

    /** Sets the password the pools connect with. */
    public Builder password(String password) {
      this.password = Objects.requireNonNull(password, "password");
      return this;
    }

    /**
     * Sets a driver property for every connection ({@code sslmode}, {@code connectTimeout}, ...).
     */
    public Builder property(String key, String value) {
      properties.setProperty(
          Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * Sets how many of the server's connections to leave to other clients: psql, migrations,
     * monitoring, and the other instances of this service if they connect to the same server. The
     * default is 0: these pools may take everything the server allows.
     *
     * @throws IllegalArgumentException if {@code connections} is negative
     */
    public Builder reserve(int connections) {
      if (connections < 0) {
        throw new IllegalArgumentException(
            "reserve of database '" + name + "' must not be negative but was " + connections);
      }
      this.reserve = connections;
      return this;
    }

    /**
     * Sets the capacity of the pools' budget: how many connections they may hold together, below
     * what the server allows (the share your DBA gave you). {@link #open()} still checks it against
     * the server on PostgreSQL. Without it the capacity is everything the server allows.
     *
     * @throws IllegalArgumentException if {@code connections} is less than 1
     */
    public Builder capacity(int connections) {
      if (connections < 1) {
        throw new IllegalArgumentException(
            "capacity of database '" + name + "' must be at least 1 but was " + connections);
      }
      this.capacity = connections;
      return this;
    }

    /**
     * Lets the pools hold, together, what {@code total} says rather than the sum of their
     * configured limits, which then count only as proportions (6 and 4: 60% and 40% of the total).
     * {@link #open()} reads it once; {@link DatabasePools#resize()} reads it again. Its value must
     * stay between the number of pools and the capacity (what the server allows, or {@link
     * #capacity(int)}).
     */
    public Builder total(IntSupplier total) {
      this.total = Objects.requireNonNull(total, "total");
      return this;
    }

    /**
     * Registers each pool's compartment ({@link WorkloadPool#compartment()}) in {@code registry}
     * (so metrics binders and dashboards find it, and its {@code setLimit} resizes the pool) until
     * the pools are closed.
     */
    public Builder registry(BulkheadRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /**
     * Lets you set any other HikariCP setting (leak detection, keepalive, TLS data source
     * properties...). It runs on each pool's configuration before the settings this class owns are
     * applied: pool name, URL, credentials, {@code maximumPoolSize}, {@code minimumIdle} (both
     * equal to the pool's limit: the pools are fixed) and {@code connectionTimeout}.
     */
    public Builder hikari(Consumer<HikariConfig> customizer) {
      this.hikari = Objects.requireNonNull(customizer, "customizer");
      return this;
    }

    /**
     * Adds a workload's pool.
     *
     * @throws IllegalArgumentException if a pool with the same name was added
     */
    public Builder pool(PoolConfig pool) {
      Objects.requireNonNull(pool, "pool");
      if (pools.containsKey(pool.name())) {
        throw new IllegalArgumentException(
            "database '"
                + name
                + "' already has a pool named '"
                + pool.name()
                + "' (limit "
                + pools.get(pool.name()).limit()
                + ")");
      }
      pools.put(pool.name(), pool);
      return this;
    }

    /**
     * Checks the pools against the server's limit and opens them, each with all its connections.
     *
     * @throws IllegalArgumentException if no URL or no pool was given, if the pools add up to more
     *     than the capacity, if the capacity is more than the server allows, or if the server is
     *     not PostgreSQL and no {@link #capacity(int)} was given; the message shows the arithmetic.
     *     No connection is left open.
     * @throws SQLException if the database cannot be reached, refuses the credentials, or cannot
     *     give every pool all its connections; the message names the URL (without a password), the
     *     user and the cause. No connection is left open.
     */
    public DatabasePools open() throws SQLException {
      if (jdbcUrl == null) {
        throw new IllegalArgumentException(
            "jdbcUrl of database '"
                + name
                + "' was not set: call"
                + " jdbcUrl(String), e.g. jdbcUrl(\"jdbc:postgresql://127.0.0.1:5432/"
                + name
                + "\")");
      }
      if (pools.isEmpty()) {
        throw new IllegalArgumentException(
            "database '" + name + "' has no pools: call" + " pool(PoolConfig) for each workload");
      }
      ServerLimit limit = readServerLimit();
      int capacity = capacity(limit);
      Budget shared = Budget.of(name, capacity);
      Map<String, Integer> sizes = sizes(capacity);

      // A name taken in the registry fails before any connection opens; register() below, after
      // the pools are open, is what decides if another thread registers the same name meanwhile.
      if (registry != null) {
        for (PoolConfig pool : pools.values()) {
          String qualified = name + "." + pool.name();
          if (registry.find(qualified).isPresent()) {
            throw new IllegalArgumentException(
                "database '"
                    + name
                    + "' cannot register pool '"
                    + pool.name()
                    + "': its registry already has a compartment named '"
                    + qualified
                    + "'");
          }
        }
      }
      Map<String, WorkloadPool> opened = new LinkedHashMap<>();
      List<WorkloadPool> registered = new ArrayList<>();
      try {
        for (PoolConfig pool : pools.values()) {
          String qualified = name + "." + pool.name();
          int size = sizes.get(pool.name());
          Bulkhead gate = gate(qualified, pool, size, shared);
          HikariDataSource hikariPool = openHikari(qualified, pool, size);
          opened.put(pool.name(), new WorkloadPool(pool, qualified, gate, hikariPool));
        }
        if (registry != null) {
          for (WorkloadPool pool : opened.values()) {
            registry.register(pool.compartment());
            registered.add(pool);
          }
        }
      } catch (SQLException | RuntimeException | Error e) {
        for (WorkloadPool pool : registered) {
          registry.remove(pool.qualifiedName());
        }
        for (WorkloadPool pool : opened.values()) {
          pool.close();
        }
        throw e;
      }
      LOG.log(
          System.Logger.Level.DEBUG,
          () ->
              "opened pools of database '"
                  + name
                  + "': "
                  + shared.shares()
                  + " of a budget of "
                  + capacity
                  + (limit == null ? "" : " (" + limit.explain() + ")"));
      return new DatabasePools(
          name, shared, limit, Collections.unmodifiableMap(opened), registry, total);
    }

    /** Each pool's limit at opening: as configured, or its part of the total supplier's value. */
    private Map<String, Integer> sizes(int capacity) {
      Map<String, Integer> sizes = new LinkedHashMap<>();
      if (total == null) {
        pools.values().forEach(pool -> sizes.put(pool.name(), pool.limit()));
        return sizes;
      }
      int now = total.getAsInt();
      if (now < pools.size() || now > capacity) {
        throw new IllegalArgumentException(
            "total of database '"
                + name
                + "' is "
                + now
                + " connections but must be between its "
                + pools.size()
                + " pools (one each) and its"
                + " capacity of "
                + capacity
                + (now < pools.size()
                    ? ": wait until the supplier gives more (a fleet budget's awaitShare)"
                    : ""));
      }
      int[] weights = new int[pools.size()];
      int i = 0;
      for (PoolConfig pool : pools.values()) {
        weights[i++] = pool.limit();
      }
      int[] parts = divide(now, weights);
      i = 0;
      for (PoolConfig pool : pools.values()) {
        sizes.put(pool.name(), parts[i++]);
      }
      return sizes;
    }

    private Properties connectionProperties() {
      Properties p = new Properties();
      p.putAll(properties);
      if (username != null) {
        p.setProperty("user", username);
      }
      if (password != null) {
        p.setProperty("password", password);
      }
      return p;
    }

    private boolean isPostgres() {
      return jdbcUrl.startsWith("jdbc:postgresql:");
    }

    /** Reads the server's limit over one short-lived connection; null if not PostgreSQL. */
    private ServerLimit readServerLimit() throws SQLException {
      Properties p = connectionProperties();
      if (isPostgres() && !p.containsKey("ApplicationName")) {
        p.setProperty("ApplicationName", name + ".limit-check");
      }
      try (Connection c = DriverManager.getConnection(jdbcUrl, p)) {
        String product = c.getMetaData().getDatabaseProductName();
        if (!"PostgreSQL".equals(product)) {
          if (capacity == 0) {
            throw new IllegalArgumentException(
                "database '"
                    + name
                    + "' is "
                    + product
                    + ", whose connection limit this library cannot read (it knows PostgreSQL): call"
                    + " capacity(int) with how many connections these pools may hold together");
          }
          LOG.log(
              System.Logger.Level.INFO,
              () ->
                  "database '"
                      + name
                      + "' is "
                      + product
                      + ": its connection limit was not read; the pools draw on the capacity of "
                      + capacity
                      + " as given");
          return null;
        }
        return ServerLimit.read(c, reserve);
      } catch (SQLException e) {
        throw new SQLException(cannotConnect(e), e.getSQLState(), e);
      }
    }

    private int capacity(ServerLimit limit) {
      int usable;
      String source;
      if (limit == null) {
        usable = capacity;
        source = "set by capacity(" + capacity + ")";
      } else if (capacity == 0) {
        if (limit.usable() < 1) {
          throw new IllegalArgumentException(
              "the server of database '"
                  + name
                  + "' leaves no"
                  + " connections for these pools: "
                  + limit.explain()
                  + "; lower reserve(int) or raise max_connections");
        }
        usable = limit.usable();
        source = limit.explain();
      } else {
        if (capacity > limit.usable()) {
          throw new IllegalArgumentException(
              "capacity of database '"
                  + name
                  + "' is "
                  + capacity
                  + " connections but the server allows only "
                  + limit.usable()
                  + ": "
                  + limit.explain()
                  + "; lower capacity(int) or reserve(int)");
        }
        usable = capacity;
        source = "set by capacity(" + capacity + "); the server allows " + limit.explain();
      }
      int configured = 0;
      StringBuilder sum = new StringBuilder();
      for (PoolConfig pool : pools.values()) {
        configured += pool.limit();
        sum.append(sum.length() == 0 ? "" : " + ")
            .append(pool.name())
            .append(' ')
            .append(pool.limit());
      }
      // With a total supplier the limits are proportions; sizes(capacity) checks the total instead.
      if (configured > usable && total == null) {
        throw new IllegalArgumentException(
            "pools of database '"
                + name
                + "' need "
                + sum
                + " = "
                + configured
                + " connections, more than its capacity of "
                + usable
                + " ("
                + source
                + "): shrink the pools"
                + (limit != null && capacity == 0 ? " or lower reserve(int)" : ""));
      }
      return usable;
    }

    private static Bulkhead gate(String qualified, PoolConfig pool, int size, Budget budget) {
      return Bulkhead.builder(qualified).limit(size).budget(budget).queue(pool.queue()).build();
    }

    private HikariDataSource openHikari(String qualified, PoolConfig pool, int size)
        throws SQLException {
      HikariConfig config = new HikariConfig();
      hikari.accept(config);
      config.setPoolName(qualified);
      config.setJdbcUrl(jdbcUrl);
      if (username != null) {
        config.setUsername(username);
      }
      if (password != null) {
        config.setPassword(password);
      }
      for (String key : properties.stringPropertyNames()) {
        config.addDataSourceProperty(key, properties.getProperty(key));
      }
      if (isPostgres() && !properties.containsKey("ApplicationName")) {
        config.addDataSourceProperty("ApplicationName", qualified);
      }
      config.setMaximumPoolSize(size);
      config.setMinimumIdle(size);
      config.setConnectionTimeout(pool.connectionTimeout().toMillis());

      HikariDataSource ds;
      try {
        ds = new HikariDataSource(config);
      } catch (HikariPool.PoolInitializationException e) {
        SQLException cause =
            e.getCause() instanceof SQLException ? (SQLException) e.getCause() : null;
        throw new SQLException(
            "pool '"
                + qualified
                + "' could not open a connection: "
                + (cause != null ? cannotConnect(cause) : e.getMessage()),
            cause != null ? cause.getSQLState() : null,
            e);
      }
      try {
        fill(ds, qualified, pool, size);
      } catch (SQLException | RuntimeException | Error e) {
        ds.close();
        throw e;
      }
      return ds;
    }

    /**
     * Borrows every connection of a new pool at once, so that HikariCP opens them all now and a
     * server without enough free slots fails start-up instead of the first busy minute. HikariCP's
     * own connectionTimeout bounds the wait.
     */
    private void fill(HikariDataSource ds, String qualified, PoolConfig pool, int size)
        throws SQLException {
      List<Connection> held = new ArrayList<>(size);
      try {
        for (int i = 0; i < size; i++) {
          held.add(ds.getConnection());
        }
      } catch (SQLException e) {
        Throwable cause = e.getCause() instanceof SQLException ? e.getCause() : e;
        throw new SQLException(
            "pool '"
                + qualified
                + "' opened only "
                + held.size()
                + " of its "
                + size
                + " connections within its connectionTimeout of "
                + pool.connectionTimeout()
                + ": "
                + (cause instanceof SQLException
                    ? cannotConnect((SQLException) cause)
                    : cause.getMessage()),
            e.getSQLState(),
            e);
      } finally {
        for (Connection c : held) {
          c.close();
        }
      }
    }

    private String cannotConnect(SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      String who = username != null ? "user '" + username + "'" : "the user given in the URL";
      String where = "database '" + name + "' at " + Urls.masked(jdbcUrl);
      if (state.equals("28000") || state.equals("28P01")) {
        return "the server refused the credentials of "
            + who
            + " for "
            + where
            + ": "
            + e.getMessage();
      }
      if (state.equals("3D000")) {
        return "the server at " + Urls.masked(jdbcUrl) + " has no such database: " + e.getMessage();
      }
      if (state.equals("53300")) {
        return "the server has no connection slots left for "
            + where
            + " (other clients hold them): "
            + e.getMessage();
      }
      return "cannot connect to " + where + " as " + who + ": " + e.getMessage();
    }
  }
}
