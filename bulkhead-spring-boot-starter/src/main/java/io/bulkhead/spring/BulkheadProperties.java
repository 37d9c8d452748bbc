package io.bulkhead.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code bulkhead.*} settings: the keys of the settings file (every one of them, under the same
 * names), and the few that only Spring has ({@code edge}, {@code warm-up}).
 *
 * <pre>
 * bulkhead:
 *   defaults:
 *     max-queue: 20
 *     max-wait: 500ms
 *   budgets:
 *     llm-api: 20
 *   compartments:
 *     llm:
 *       rate: 40/s
 *       latency: 200ms
 *       criticality: critical
 *       budget: llm-api
 *       upstream: https://llm.internal:8443
 *       paths: [/chat/**]
 * </pre>
 *
 * <p>This class is what IDEs complete the keys from, and it refuses a key that is not one of these
 * (a typo such as {@code limt}) instead of ignoring it. The values are read by the settings model
 * of {@code bulkhead-config} ({@code BulkheadFile.fromMap}), as the file's are, so the types here
 * take whatever the model takes ({@code max-queue: unbounded}, {@code 1.5s}); {@link
 * BulkheadAutoConfiguration} fails start-up with the key of the first value that is wrong.
 */
@ConfigurationProperties(prefix = BulkheadProperties.PREFIX, ignoreUnknownFields = false)
public class BulkheadProperties {

  /** The prefix of every setting. */
  public static final String PREFIX = "bulkhead";

  /**
   * What every compartment takes unless it gives its own, key by key: a compartment's own limit,
   * max-queue, max-wait or budget wins over the one here.
   */
  private final Defaults defaults = new Defaults();

  /** Compartments by name: each becomes a Bulkhead in the BulkheadRegistry bean. */
  private Map<String, Compartment> compartments = new LinkedHashMap<>();

  /** Budgets by name: a finite resource several compartments draw their limits from. */
  private Map<String, Budget> budgets = new LinkedHashMap<>();

  /**
   * Databases by name: each gets one connection pool per workload, a DataSource bean named
   * database.workload (orders.checkout), checked against the server's max_connections (needs
   * bulkhead-jdbc).
   */
  private Map<String, Database> datasources = new LinkedHashMap<>();

  /** Worker pools by name: each becomes a WorkerPool, shut down with the application context. */
  private Map<String, WorkerPool> workerPools = new LinkedHashMap<>();

  /** The headroom of each criticality, for limits derived from rate and latency. */
  private final Headroom headroom = new Headroom();

  /** The web edge's own settings, {@code bulkhead.edge.*}. */
  private final Edge edge = new Edge();

  /** The readiness warm-up, {@code bulkhead.warm-up.*}; see BulkheadWarmUpAutoConfiguration. */
  private final WarmUp warmUp = new WarmUp();

  /** Creates empty settings; Spring binds them. */
  public BulkheadProperties() {}

  /** What every compartment inherits, {@code bulkhead.defaults.*}. */
  public Defaults getDefaults() {
    return defaults;
  }

  /** The compartments by name, in the order they were configured. */
  public Map<String, Compartment> getCompartments() {
    return compartments;
  }

  /** Replaces the compartments; for binding. */
  public void setCompartments(Map<String, Compartment> compartments) {
    this.compartments = compartments;
  }

  /** The budgets by name. */
  public Map<String, Budget> getBudgets() {
    return budgets;
  }

  /** Replaces the budgets; for binding. */
  public void setBudgets(Map<String, Budget> budgets) {
    this.budgets = budgets;
  }

  /** The databases by name. */
  public Map<String, Database> getDatasources() {
    return datasources;
  }

  /** Replaces the databases; for binding. */
  public void setDatasources(Map<String, Database> datasources) {
    this.datasources = datasources;
  }

  /** The worker pools by name. */
  public Map<String, WorkerPool> getWorkerPools() {
    return workerPools;
  }

  /** Replaces the worker pools; for binding. */
  public void setWorkerPools(Map<String, WorkerPool> workerPools) {
    this.workerPools = workerPools;
  }

  /** The headroom of each criticality, {@code bulkhead.headroom.*}. */
  public Headroom getHeadroom() {
    return headroom;
  }

  /** The web edge's settings. */
  public Edge getEdge() {
    return edge;
  }

  /** The readiness warm-up's settings. */
  public WarmUp getWarmUp() {
    return warmUp;
  }

  /** The web edge's settings, {@code bulkhead.edge.*}. */
  public static class Edge {

    /**
     * Whether paths may send the management (Actuator) endpoints of the application's own server
     * into compartments. Off by default: they are left out of every compartment, so health checks
     * answer while one is full, and a pattern naming them (/actuator/**) fails start-up.
     */
    private boolean includeManagement;

    /** Creates the defaults; Spring binds them. */
    public Edge() {}

    /** Whether paths may cover the management endpoints. */
    public boolean isIncludeManagement() {
      return includeManagement;
    }

    /** Sets whether paths may cover the management endpoints; for binding. */
    public void setIncludeManagement(boolean includeManagement) {
      this.includeManagement = includeManagement;
    }
  }

  /**
   * The keys every compartment and worker pool takes, {@code bulkhead.defaults.*}: under {@code
   * bulkhead.defaults} each is inherited, key by key, by every compartment, worker pool and
   * database pool that does not give it (a compartment's own limit, or its own rate and latency,
   * win over a default limit). The values are read as the settings file reads them.
   */
  public static class Defaults {

    /**
     * How many calls may be in flight at once; at least 1. A compartment needs one unless it gives
     * rate and latency, or bulkhead.defaults.limit is set.
     */
    private @Nullable Integer limit;

    /** The limit; null when not set. */
    public @Nullable Integer getLimit() {
      return limit;
    }

    /** Sets the limit; for binding. */
    public void setLimit(@Nullable Integer limit) {
      this.limit = limit;
    }

    /**
     * How many callers may wait for a slot when all are taken: a whole number (0 rejects at once,
     * the default) or unbounded.
     */
    private @Nullable String maxQueue;

    /** The max-queue; null when not set. */
    public @Nullable String getMaxQueue() {
      return maxQueue;
    }

    /** Sets the max-queue; for binding. */
    public void setMaxQueue(@Nullable String maxQueue) {
      this.maxQueue = maxQueue;
    }

    /**
     * How long one caller may wait for a slot (10ms, 1.5s, PT0.5S) or unbounded; required when
     * max-queue is above 0 (here or as bulkhead.defaults.max-wait).
     */
    private @Nullable String maxWait;

    /** The max-wait; null when not set. */
    public @Nullable String getMaxWait() {
      return maxWait;
    }

    /** Sets the max-wait; for binding. */
    public void setMaxWait(@Nullable String maxWait) {
      this.maxWait = maxWait;
    }

    /** The name of the budget (under bulkhead.budgets) the compartment draws its limit from. */
    private @Nullable String budget;

    /** The budget name; null when not set. */
    public @Nullable String getBudget() {
      return budget;
    }

    /** Sets the budget name; for binding. */
    public void setBudget(@Nullable String budget) {
      this.budget = budget;
    }

    /**
     * critical or optional: the headroom a limit derived from rate and latency gets
     * (bulkhead.headroom).
     */
    private @Nullable String criticality;

    /** The criticality; null when not set. */
    public @Nullable String getCriticality() {
      return criticality;
    }

    /** Sets the criticality; for binding. */
    public void setCriticality(@Nullable String criticality) {
      this.criticality = criticality;
    }

    /**
     * The headroom a limit derived from rate and latency gets, instead of the one of its
     * criticality (3, x3, 1.5, 4/3).
     */
    private @Nullable String headroom;

    /** The headroom; null when not set. */
    public @Nullable String getHeadroom() {
      return headroom;
    }

    /** Sets the headroom; for binding. */
    public void setHeadroom(@Nullable String headroom) {
      this.headroom = headroom;
    }

    /**
     * Whether each call in flight keeps a core busy for most of its latency (rendering,
     * compressing), so more of them than the CPUs only queue for a core; false by default.
     */
    private @Nullable Boolean cpuBound;

    /** Whether calls are CPU-bound; null when not set. */
    public @Nullable Boolean getCpuBound() {
      return cpuBound;
    }

    /** Sets whether calls are CPU-bound; for binding. */
    public void setCpuBound(@Nullable Boolean cpuBound) {
      this.cpuBound = cpuBound;
    }

    /** Creates empty settings; Spring binds them. */
    public Defaults() {}
  }

  /**
   * What a compartment and a worker pool add to {@code bulkhead.defaults}: the load a limit is
   * derived from when none is given (need = rate x latency, times the headroom).
   */
  public static class Sized extends Defaults {

    /** The expected arrival rate (40/s, 2400/min); with latency, the limit is derived from it. */
    private @Nullable String rate;

    /** How long one call or job holds its slot (50ms, 1.5s); with rate, the limit is derived. */
    private @Nullable String latency;

    /** Creates empty settings; Spring binds them. */
    public Sized() {}

    /** The rate; null when not set. */
    public @Nullable String getRate() {
      return rate;
    }

    /** Sets the rate; for binding. */
    public void setRate(@Nullable String rate) {
      this.rate = rate;
    }

    /** The latency; null when not set. */
    public @Nullable String getLatency() {
      return latency;
    }

    /** Sets the latency; for binding. */
    public void setLatency(@Nullable String latency) {
      this.latency = latency;
    }
  }

  /**
   * The settings of one compartment, {@code bulkhead.compartments.<name>.*}: the keys of {@code
   * bulkhead.defaults}, and those about one dependency alone.
   */
  public static class Compartment extends Sized {

    /**
     * Path patterns whose requests enter this compartment at the web edge, in Spring's syntax
     * (/login, /chat/** for /chat and everything below it, /users/{id}). Enforced by
     * bulkhead-servlet's filter in Spring MVC and by a WebFilter with bulkhead-reactor in WebFlux.
     */
    private List<String> paths = new ArrayList<>();

    /**
     * The upstream whose outgoing RestClient and WebClient calls enter this compartment: a base URL
     * (https://llm.internal:8443/v1) or a host (llm.internal).
     */
    private @Nullable String upstream;

    /**
     * An adaptive limit, {@code adaptive.controller} (gradient or aimd), {@code adaptive.min},
     * {@code adaptive.max}, {@code adaptive.interval}: the limit starts at {@code limit} and moves
     * within [min, max]. Null for a static limit.
     */
    private @Nullable Adaptive adaptive;

    /** Creates empty settings; Spring binds them. */
    public Compartment() {}

    /** The adaptive limit's settings; null for a static limit. */
    public @Nullable Adaptive getAdaptive() {
      return adaptive;
    }

    /** Sets the adaptive limit's settings. */
    public void setAdaptive(@Nullable Adaptive adaptive) {
      this.adaptive = adaptive;
    }

    /** The path patterns routed into this compartment at the web edge. */
    public List<String> getPaths() {
      return paths;
    }

    /** Sets the path patterns. */
    public void setPaths(List<String> paths) {
      this.paths = paths;
    }

    /** The upstream base URL or host; null for none. */
    public @Nullable String getUpstream() {
      return upstream;
    }

    /** Sets the upstream base URL or host. */
    public void setUpstream(@Nullable String upstream) {
      this.upstream = upstream;
    }
  }

  /** An adaptive limit, {@code bulkhead.compartments.<name>.adaptive.*}. */
  public static class Adaptive {

    /** The controller: gradient (the default) or aimd. */
    private String controller = "gradient";

    /** The lowest limit; required, at least 1. */
    private @Nullable Integer min;

    /** The highest limit; required, at least min. */
    private @Nullable Integer max;

    /** How long the compartment measures between two decisions (1s by default). */
    private Duration interval = Duration.ofSeconds(1);

    /** Creates empty settings; Spring binds them. */
    public Adaptive() {}

    /** The controller's name. */
    public String getController() {
      return controller;
    }

    /** Sets the controller's name. */
    public void setController(String controller) {
      this.controller = controller;
    }

    /** The lowest limit; null when not set. */
    public @Nullable Integer getMin() {
      return min;
    }

    /** Sets the lowest limit. */
    public void setMin(@Nullable Integer min) {
      this.min = min;
    }

    /** The highest limit; null when not set. */
    public @Nullable Integer getMax() {
      return max;
    }

    /** Sets the highest limit. */
    public void setMax(@Nullable Integer max) {
      this.max = max;
    }

    /** The interval between two decisions. */
    public Duration getInterval() {
      return interval;
    }

    /** Sets the interval between two decisions. */
    public void setInterval(Duration interval) {
      this.interval = interval;
    }
  }

  /**
   * The settings of one worker pool, {@code bulkhead.worker-pools.<name>.*}: a WorkerPool whose
   * limit is its number of workers, in the Compartments bean and (its compartment) the registry.
   */
  public static class WorkerPool extends Sized {

    /** platform (the default) or virtual: the threads the pool runs its jobs on. */
    private @Nullable String threads;

    /** The threads; null when not set. */
    public @Nullable String getThreads() {
      return threads;
    }

    /** Sets the threads; for binding. */
    public void setThreads(@Nullable String threads) {
      this.threads = threads;
    }

    /** Creates empty settings; Spring binds them. */
    public WorkerPool() {}
  }

  /**
   * The headroom of each criticality, {@code bulkhead.headroom.*}: how far a derived limit exceeds
   * the need.
   */
  public static class Headroom {

    /**
     * The headroom of the derived limit of a critical compartment (the default is in the glossary).
     */
    private @Nullable String critical;

    /** The critical headroom; null when not set. */
    public @Nullable String getCritical() {
      return critical;
    }

    /** Sets the critical headroom; for binding. */
    public void setCritical(@Nullable String critical) {
      this.critical = critical;
    }

    /**
     * The headroom of the derived limit of an optional compartment (the default is in the
     * glossary).
     */
    private @Nullable String optional;

    /** The optional headroom; null when not set. */
    public @Nullable String getOptional() {
      return optional;
    }

    /** Sets the optional headroom; for binding. */
    public void setOptional(@Nullable String optional) {
      this.optional = optional;
    }

    /** Creates empty settings; Spring binds them. */
    public Headroom() {}
  }

  /** The settings of one budget, {@code bulkhead.budgets.<name>.*}. */
  public static class Budget {

    /** How many units (connections, concurrent calls) the resource really has; at least 1. */
    private @Nullable Integer capacity;

    /** Creates empty settings; Spring binds them. */
    public Budget() {}

    /**
     * The short form, {@code bulkhead.budgets.postgres: 10}: the capacity alone. Spring binds it
     * through this; a value that is not a whole number is left for the settings model to refuse,
     * with its key.
     */
    public static Budget valueOf(String capacity) {
      Budget budget = new Budget();
      try {
        budget.setCapacity(Integer.valueOf(capacity.trim()));
      } catch (NumberFormatException notWhole) {
        // refused by the settings model, which reads the value as written
      }
      return budget;
    }

    /** The short form as YAML gives it, a number. */
    public static Budget valueOf(Integer capacity) {
      return valueOf(String.valueOf(capacity));
    }

    /** The capacity; null when not set. */
    public @Nullable Integer getCapacity() {
      return capacity;
    }

    /** Sets the capacity. */
    public void setCapacity(@Nullable Integer capacity) {
      this.capacity = capacity;
    }
  }

  /** The settings of one database, {@code bulkhead.datasources.<name>.*}. */
  public static class Database {

    /** The JDBC URL (jdbc:postgresql://db:5432/orders); required. */
    private @Nullable String url;

    /** The user the pools connect as; without it, the URL or the driver decides. */
    private @Nullable String username;

    /** The password the pools connect with. */
    private @Nullable String password;

    /**
     * How many of the server's connections to leave to other clients (psql, migrations, the other
     * instances of this service); 0 (the default) lets these pools take all the server allows.
     */
    private @Nullable Integer reserve;

    /**
     * The capacity of the database's budget: how many connections the pools may hold together,
     * below what the server allows; without it, all the server allows (PostgreSQL's max_connections
     * less its reserved connections and reserve). Required for a database other than PostgreSQL,
     * whose limit is not read.
     */
    private @Nullable Integer capacity;

    /** The pools by workload name: each becomes a DataSource bean named <database>.<workload>. */
    private Map<String, Pool> pools = new LinkedHashMap<>();

    /** Creates empty settings; Spring binds them. */
    public Database() {}

    /** The JDBC URL; null when not set. */
    public @Nullable String getUrl() {
      return url;
    }

    /** Sets the JDBC URL. */
    public void setUrl(@Nullable String url) {
      this.url = url;
    }

    /** The user; null when not set. */
    public @Nullable String getUsername() {
      return username;
    }

    /** Sets the user. */
    public void setUsername(@Nullable String username) {
      this.username = username;
    }

    /** The password; null when not set. */
    public @Nullable String getPassword() {
      return password;
    }

    /** Sets the password. */
    public void setPassword(@Nullable String password) {
      this.password = password;
    }

    /** How many server connections are left to other clients. */
    public @Nullable Integer getReserve() {
      return reserve;
    }

    /** Sets how many server connections are left to other clients. */
    public void setReserve(@Nullable Integer reserve) {
      this.reserve = reserve;
    }

    /** The capacity; null for all the server allows. */
    public @Nullable Integer getCapacity() {
      return capacity;
    }

    /** Sets the capacity. */
    public void setCapacity(@Nullable Integer capacity) {
      this.capacity = capacity;
    }

    /** The pools by workload name, in the order they were configured. */
    public Map<String, Pool> getPools() {
      return pools;
    }

    /** Replaces the pools; for binding. */
    public void setPools(Map<String, Pool> pools) {
      this.pools = pools;
    }
  }

  /**
   * The settings of one workload's pool, {@code bulkhead.datasources.<name>.pools.<workload>.*}.
   */
  public static class Pool {

    /**
     * The pool's limit: how many connections it holds, opened at start-up and kept; required, at
     * least 1.
     */
    private @Nullable Integer limit;

    /**
     * How many callers may wait when every connection is in use; 0 (the default) refuses at once.
     */
    private @Nullable String maxQueue;

    /** How long one caller may wait for a connection; required when max-queue is above 0. */
    private @Nullable String maxWait;

    /** How long HikariCP waits for the server to give a connection (at least 250ms; default 5s). */
    private @Nullable String connectionTimeout;

    /** Creates empty settings; Spring binds them. */
    public Pool() {}

    /** How many connections the pool holds; null when not set. */
    public @Nullable Integer getLimit() {
      return limit;
    }

    /** Sets how many connections the pool holds. */
    public void setLimit(@Nullable Integer limit) {
      this.limit = limit;
    }

    /** How many callers may wait for a connection; null when not set. */
    public @Nullable String getMaxQueue() {
      return maxQueue;
    }

    /** Sets how many callers may wait for a connection. */
    public void setMaxQueue(@Nullable String maxQueue) {
      this.maxQueue = maxQueue;
    }

    /** How long one caller may wait; null when not set. */
    public @Nullable String getMaxWait() {
      return maxWait;
    }

    /** Sets how long one caller may wait. */
    public void setMaxWait(@Nullable String maxWait) {
      this.maxWait = maxWait;
    }

    /** HikariCP's connection timeout; null for the default. */
    public @Nullable String getConnectionTimeout() {
      return connectionTimeout;
    }

    /** Sets HikariCP's connection timeout. */
    public void setConnectionTimeout(@Nullable String connectionTimeout) {
      this.connectionTimeout = connectionTimeout;
    }
  }

  /**
   * The readiness warm-up, {@code bulkhead.warm-up.*}: requests the application sends to its own
   * server once it listens and before it reports that it accepts traffic.
   */
  public static class WarmUp {

    /** Whether to warm up before readiness. Off by default. */
    private boolean enabled;

    /** The paths to request (GET), as a client sends them: context path included. */
    private List<String> paths = new ArrayList<>();

    /** Requests per path. */
    private int requests = 20;

    /** How long the whole warm-up may take; readiness follows when it runs out. */
    private Duration timeout = Duration.ofSeconds(30);

    /** Creates the defaults; Spring binds them. */
    public WarmUp() {}

    /** Whether the warm-up runs. */
    public boolean isEnabled() {
      return enabled;
    }

    /** Turns the warm-up on or off; for binding. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** The paths to request. */
    public List<String> getPaths() {
      return paths;
    }

    /** Replaces the paths; for binding. */
    public void setPaths(List<String> paths) {
      this.paths = paths;
    }

    /** Requests per path. */
    public int getRequests() {
      return requests;
    }

    /** Sets the requests per path; for binding. */
    public void setRequests(int requests) {
      this.requests = requests;
    }

    /** The longest the warm-up may take. */
    public Duration getTimeout() {
      return timeout;
    }

    /** Sets the longest the warm-up may take; for binding. */
    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }
  }
}
