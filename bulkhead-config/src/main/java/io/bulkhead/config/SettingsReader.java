package io.bulkhead.config;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.LimitController;
import io.bulkhead.QueueSettings;
import io.bulkhead.Sizing;
import io.bulkhead.config.internal.DidYouMean;
import io.bulkhead.config.internal.Printable;
import io.bulkhead.config.internal.YamlTree;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * One pass over a settings tree, whichever front end composed it (a YAML file, or Spring's bound
 * properties): every check throws a {@link ConfigException} at the first problem, with the key and,
 * from a file, the line. The grammar, section by section:
 *
 * <pre>
 * defaults       DEFAULT_KEYS, inherited key by key by every compartment, worker pool and pool
 * headroom       critical, optional
 * budgets.NAME   capacity (or the capacity alone: postgres: 10)
 * compartments.NAME  DEFAULT_KEYS + rate, latency, paths, upstream, adaptive {controller: gradient
 *                    or aimd, min, max, interval}
 * worker-pools.NAME  DEFAULT_KEYS + rate, latency, threads
 * datasources.NAME   url, username, password, reserve, capacity, pools
 * datasources.NAME.pools.WORKLOAD  limit, max-queue, max-wait, connection-timeout
 * </pre>
 *
 * <p>Inheritance: a key a compartment gives wins over the same key of {@code defaults}, with two
 * pairs decided together. The limit: a compartment's own {@code limit}, else one derived from its
 * own {@code rate} and {@code latency}, else {@code defaults.limit}. The headroom: a compartment
 * that gives {@code criticality} or {@code headroom} takes neither from {@code defaults}. A
 * database pool takes {@code limit}, {@code max-queue} and {@code max-wait} from {@code defaults};
 * its budget is always its database's.
 */
final class SettingsReader {

  /** The keys {@code defaults} holds: those every compartment and worker pool takes. */
  static final Set<String> DEFAULT_KEYS =
      Set.of("limit", "max-queue", "max-wait", "budget", "criticality", "headroom", "cpu-bound");

  static final Set<String> TOP_KEYS =
      Set.of("defaults", "headroom", "budgets", "compartments", "worker-pools", "datasources");
  static final Set<String> HEADROOM_KEYS = Set.of("critical", "optional");
  static final Set<String> BUDGET_KEYS = Set.of("capacity");
  static final Set<String> COMPARTMENT_KEYS =
      with(DEFAULT_KEYS, "rate", "latency", "paths", "upstream", "adaptive");
  static final Set<String> ADAPTIVE_KEYS = Set.of("controller", "min", "max", "interval");
  static final Set<String> WORKER_POOL_KEYS = with(DEFAULT_KEYS, "rate", "latency", "threads");
  static final Set<String> DATABASE_KEYS =
      Set.of("url", "username", "password", "reserve", "capacity", "pools");
  static final Set<String> POOL_KEYS =
      Set.of("limit", "max-queue", "max-wait", "connection-timeout");

  /** The word that says "no bound" for {@code max-queue} and {@code max-wait}. */
  static final String UNBOUNDED = "unbounded";

  private final YamlTree yaml;
  private final boolean requireCompartments;
  private final Map<Criticality, Headroom> headrooms = new EnumMap<>(Criticality.class);
  private final LinkedHashMap<String, BudgetSpec> budgets = new LinkedHashMap<>();
  private final List<CompartmentSpec> compartments = new ArrayList<>();
  private final List<DatabaseSpec> datasources = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();
  private Map<String, YamlTree.Entry> defaults = Map.of();

  /**
   * @param requireCompartments whether a tree that declares nothing is an error (a file is; an
   *     application's properties without any {@code bulkhead.*} are not)
   */
  SettingsReader(YamlTree yaml, boolean requireCompartments) {
    this.yaml = yaml;
    this.requireCompartments = requireCompartments;
    for (Criticality c : Criticality.values()) {
      headrooms.put(c, c.defaultHeadroom());
    }
  }

  private static Set<String> with(Set<String> base, String... more) {
    Set<String> all = new TreeSet<>(base);
    all.addAll(List.of(more));
    return Set.copyOf(all);
  }

  BulkheadFile read(Optional<Node> root) {
    if (root.isEmpty()) {
      if (requireCompartments) {
        throw new ConfigException(
            yaml.file, 0, null, "the file is empty: expected 'budgets' and 'compartments'");
      }
      return result();
    }
    Map<String, YamlTree.Entry> top = yaml.mapping(root.get(), null, TOP_KEYS);
    if (top.containsKey("headroom")) {
      readHeadrooms(top.get("headroom"));
    }
    if (top.containsKey("budgets")) {
      for (YamlTree.Entry e : yaml.mapping(top.get("budgets").value(), "budgets", null).values()) {
        readBudget(e);
      }
    }
    if (top.containsKey("defaults")) {
      readDefaults(top.get("defaults"));
    }
    YamlTree.Entry section = top.get("compartments");
    if (requireCompartments
        && section == null
        && !top.containsKey("worker-pools")
        && !top.containsKey("datasources")) {
      throw new ConfigException(
          yaml.file,
          YamlTree.line(root.get()),
          "compartments",
          "missing: the file declares no compartments (nor worker-pools, nor datasources)");
    }
    if (section != null) {
      Map<String, YamlTree.Entry> declared = yaml.mapping(section.value(), "compartments", null);
      if (declared.isEmpty() && requireCompartments) {
        throw yaml.error(
            section.keyNode(), "compartments", "is empty: declare at least one compartment");
      }
      for (YamlTree.Entry e : declared.values()) {
        compartments.add(readCompartment(e, false));
      }
    }
    if (top.containsKey("worker-pools")) {
      for (YamlTree.Entry e :
          yaml.mapping(top.get("worker-pools").value(), "worker-pools", null).values()) {
        for (CompartmentSpec c : compartments) {
          if (c.name().equals(e.key())) {
            throw yaml.error(
                e.keyNode(),
                e.path(),
                "the name is taken by the compartment on line "
                    + c.line()
                    + ": names must be unique, they are the registry's keys");
          }
        }
        compartments.add(readCompartment(e, true));
      }
    }
    if (top.containsKey("datasources")) {
      for (YamlTree.Entry e :
          yaml.mapping(top.get("datasources").value(), "datasources", null).values()) {
        datasources.add(readDatabase(e));
      }
    }
    return result();
  }

  private BulkheadFile result() {
    return new BulkheadFile(
        yaml.file,
        headrooms,
        new ArrayList<>(budgets.values()),
        compartments,
        datasources,
        warnings);
  }

  private void readHeadrooms(YamlTree.Entry section) {
    for (YamlTree.Entry e : yaml.mapping(section.value(), "headroom", HEADROOM_KEYS).values()) {
      headrooms.put(Criticality.valueOf(e.key().toUpperCase(Locale.ROOT)), headroom(e));
    }
  }

  private void readBudget(YamlTree.Entry e) {
    requireName(e, "budget");
    int capacity;
    if (e.value() instanceof MappingNode) {
      Map<String, YamlTree.Entry> fields = yaml.mapping(e.value(), e.path(), BUDGET_KEYS);
      YamlTree.Entry c = fields.get("capacity");
      if (c == null) {
        throw yaml.error(
            e.keyNode(),
            e.path(),
            "has no capacity: add capacity (how many connections or"
                + " concurrent calls the resource takes)");
      }
      capacity = yaml.whole(c, 1);
    } else {
      capacity = yaml.whole(e, 1);
    }
    try {
      io.bulkhead.Budget.of(e.key(), capacity); // the bounds build() applies, by their own code
    } catch (IllegalArgumentException refused) {
      throw yaml.error(e.keyNode(), e.path(), refused.getMessage());
    }
    budgets.put(e.key(), new BudgetSpec(e.key(), capacity, YamlTree.line(e.keyNode())));
  }

  /**
   * Checks every value of {@code defaults} once, where it is written: a compartment that inherits
   * one can then only be wrong in combination with its own keys.
   */
  private void readDefaults(YamlTree.Entry section) {
    defaults = yaml.mapping(section.value(), "defaults", DEFAULT_KEYS);
    if (defaults.containsKey("limit")) {
      yaml.whole(defaults.get("limit"), 1);
    }
    QueueSettings queue = queue(defaults, Map.of());
    if (queue.mayQueue() && !defaults.containsKey("max-wait")) {
      throw noMaxWait(defaults.get("max-queue"), queue);
    }
    budgetName(defaults.get("budget"));
    criticality(defaults.get("criticality"));
    if (defaults.containsKey("headroom")) {
      headroom(defaults.get("headroom"));
    }
    if (defaults.containsKey("cpu-bound")) {
      yaml.bool(defaults.get("cpu-bound"));
    }
  }

  private CompartmentSpec readCompartment(YamlTree.Entry e, boolean pool) {
    requireName(e, pool ? "worker pool" : "compartment");
    Map<String, YamlTree.Entry> f =
        yaml.mapping(e.value(), e.path(), pool ? WORKER_POOL_KEYS : COMPARTMENT_KEYS);

    // criticality and headroom are inherited together: a compartment that gives either keeps its
    // own.
    boolean ownSizing = f.containsKey("criticality") || f.containsKey("headroom");
    Map<String, YamlTree.Entry> sizing = ownSizing ? f : defaults;
    Criticality criticality = criticality(sizing.get("criticality"));
    Headroom headroom = sizing.containsKey("headroom") ? headroom(sizing.get("headroom")) : null;

    double rate = Double.NaN;
    if (f.containsKey("rate")) {
      YamlTree.Entry r = f.get("rate");
      rate = parse(r, Quantities::parseRate);
      if (!(rate > 0)) {
        throw yaml.error(
            r.value(), r.path(), "must be above zero but was " + Printable.quote(yaml.scalar(r)));
      }
    }
    Duration latency = f.containsKey("latency") ? positiveDuration(f.get("latency")) : null;
    if (f.containsKey("rate") != f.containsKey("latency")) {
      String missing = latency == null ? "latency" : "rate";
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "has a "
              + (latency == null ? "rate" : "latency")
              + " but no "
              + missing
              + ": Little's law needs both (add "
              + missing
              + (latency == null ? ", how long one call holds its slot, like 50ms" : ", like 40/s")
              + ")");
    }

    int limit;
    boolean derived;
    Headroom applied = null;
    if (f.containsKey("limit")) {
      YamlTree.Entry limitAt = f.get("limit");
      if (f.containsKey("headroom")) {
        throw yaml.error(
            f.get("headroom").keyNode(),
            f.get("headroom").path(),
            "give a headroom or a limit, not both: the limit is either given or derived from"
                + " rate x latency x headroom");
      }
      limit = yaml.whole(limitAt, 1);
      derived = false;
      if (latency != null) {
        double need = need(f.get("latency"), rate, latency);
        if (limit < need) {
          warnings.add(
              yaml.file
                  + (YamlTree.line(limitAt.value()) > 0 ? ":" + YamlTree.line(limitAt.value()) : "")
                  + ": "
                  + limitAt.path()
                  + ": "
                  + limit
                  + " is below the need of "
                  + Quantities.formatNumber(need)
                  + " ("
                  + Quantities.formatRate(rate)
                  + " x "
                  + Quantities.formatDuration(latency)
                  + "): it rejects "
                  + (pool ? "jobs" : "calls")
                  + " even at the expected rate");
        }
      }
    } else if (latency != null) {
      if (headroom == null && criticality == null) {
        throw yaml.error(
            e.keyNode(),
            e.path(),
            "derives its limit from rate and latency but has no"
                + " criticality: add criticality: critical (headroom "
                + headrooms.get(Criticality.CRITICAL)
                + ") or optional ("
                + headrooms.get(Criticality.OPTIONAL)
                + "), or a headroom");
      }
      applied = headroom != null ? headroom : headrooms.get(criticality);
      double need = need(f.get("latency"), rate, latency);
      try {
        limit = applied.limitFor(need);
      } catch (IllegalArgumentException tooLarge) {
        throw yaml.error(e.keyNode(), e.path(), tooLarge.getMessage());
      }
      derived = true;
    } else if (defaults.containsKey("limit")) {
      limit = yaml.whole(defaults.get("limit"), 1);
      derived = false;
    } else {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "needs a limit, or a rate and a latency to derive one from (Little's law: need = rate"
              + " x latency)");
    }
    QueueSettings queue = compartmentQueue(e, f);
    YamlTree.Entry budgetAt = f.containsKey("budget") ? f.get("budget") : defaults.get("budget");
    String budget = budgetName(budgetAt);
    boolean cpuBound =
        f.containsKey("cpu-bound")
            ? yaml.bool(f.get("cpu-bound"))
            : defaults.containsKey("cpu-bound") && yaml.bool(defaults.get("cpu-bound"));
    boolean virtual = pool && f.containsKey("threads") && threads(f.get("threads"));
    List<String> paths = f.containsKey("paths") ? paths(f.get("paths")) : List.of();
    String upstream = f.containsKey("upstream") ? upstream(f.get("upstream")) : null;
    AdaptiveLimit adaptive = f.containsKey("adaptive") ? adaptive(f.get("adaptive"), limit) : null;
    return new CompartmentSpec(
        e.key(),
        e.path(),
        YamlTree.line(e.keyNode()),
        limit,
        derived,
        queue,
        budget,
        criticality,
        rate,
        latency,
        applied,
        pool,
        virtual,
        cpuBound,
        paths,
        upstream,
        adaptive);
  }

  /**
   * {@code adaptive: {controller: gradient, min: 2, max: 20, interval: 1s}}; limit is the start.
   */
  private AdaptiveLimit adaptive(YamlTree.Entry e, int limit) {
    Map<String, YamlTree.Entry> a = yaml.mapping(e.value(), e.path(), ADAPTIVE_KEYS);
    LimitController controller = LimitController.gradient();
    if (a.containsKey("controller")) {
      YamlTree.Entry c = a.get("controller");
      String name = yaml.scalar(c).trim();
      controller =
          LimitController.named(name)
              .orElseThrow(
                  () ->
                      yaml.error(
                          c.value(),
                          c.path(),
                          "must be gradient or aimd but was " + Printable.quote(name)));
    }
    for (String key : List.of("min", "max")) {
      if (!a.containsKey(key)) {
        throw yaml.error(
            e.value(), e.path(), "needs a " + key + ": the limit moves within [min, max]");
      }
    }
    int min = yaml.whole(a.get("min"), 1);
    int max = yaml.whole(a.get("max"), 1);
    if (max < min) {
      throw yaml.error(
          a.get("max").value(),
          a.get("max").path(),
          "must be at least min (" + min + ") but was " + max);
    }
    if (limit < min || limit > max) {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "the limit "
              + limit
              + " is where the adaptive limit starts and must lie within [min, max] = ["
              + min
              + ", "
              + max
              + "]");
    }
    Duration interval =
        a.containsKey("interval")
            ? positiveDuration(a.get("interval"))
            : AdaptiveLimit.DEFAULT_INTERVAL;
    return new AdaptiveLimit(controller, min, max, interval);
  }

  /**
   * The queue settings of a compartment or pool: its own {@code max-queue} and {@code max-wait},
   * else those of {@code defaults}. A queue needs a {@code max-wait}; a {@code max-wait} the
   * compartment gives itself needs a queue (an inherited one may go unused).
   */
  private QueueSettings compartmentQueue(YamlTree.Entry e, Map<String, YamlTree.Entry> f) {
    QueueSettings queue = queue(f, defaults);
    if (queue.mayQueue() && !f.containsKey("max-wait") && !defaults.containsKey("max-wait")) {
      throw noMaxWait(f.getOrDefault("max-queue", e), queue);
    }
    if (!queue.mayQueue() && f.containsKey("max-wait")) {
      throw yaml.error(
          f.get("max-wait").keyNode(),
          f.get("max-wait").path(),
          "has no effect without a queue: add max-queue (how many callers may wait), or remove"
              + " max-wait");
    }
    return queue;
  }

  private ConfigException noMaxWait(YamlTree.Entry at, QueueSettings queue) {
    String callers;
    if (queue.maxQueue().isEmpty()) {
      callers = "any number of callers";
    } else {
      int n = queue.maxQueue().getAsInt();
      callers = n + " caller" + (n == 1 ? "" : "s");
    }
    return yaml.error(
        at.keyNode(),
        at.path(),
        "lets "
            + callers
            + " wait but there is no max-wait: add max-wait (how long one may wait, like 100ms,"
            + " or unbounded)");
  }

  /** {@code max-queue} and {@code max-wait} from {@code own}, else from {@code inherited}. */
  private QueueSettings queue(
      Map<String, YamlTree.Entry> own, Map<String, YamlTree.Entry> inherited) {
    QueueSettings queue = QueueSettings.DEFAULT;
    YamlTree.Entry q =
        own.containsKey("max-queue") ? own.get("max-queue") : inherited.get("max-queue");
    if (q != null) {
      if (isUnbounded(q)) {
        queue = queue.withUnboundedQueue();
      } else {
        int n = yaml.whole(q, 0);
        QueueSettings before = queue;
        queue = settle(q, () -> before.withMaxQueue(n));
      }
    }
    YamlTree.Entry w =
        own.containsKey("max-wait") ? own.get("max-wait") : inherited.get("max-wait");
    if (w != null) {
      if (isUnbounded(w)) {
        queue = queue.withUnboundedWait();
      } else {
        Duration d = positiveDuration(w);
        QueueSettings before = queue;
        queue = settle(w, () -> before.withMaxWait(d));
      }
    }
    return queue;
  }

  private DatabaseSpec readDatabase(YamlTree.Entry e) {
    requireName(e, "database");
    Map<String, YamlTree.Entry> f = yaml.mapping(e.value(), e.path(), DATABASE_KEYS);
    if (!f.containsKey("url")) {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "has no url: add url, the database's JDBC URL (jdbc:postgresql://db:5432/"
              + e.key()
              + ")");
    }
    String url = yaml.scalar(f.get("url")).trim();
    if (!url.startsWith("jdbc:")) {
      throw yaml.error(
          f.get("url").value(),
          f.get("url").path(),
          "must start with 'jdbc:' (jdbc:postgresql://db:5432/" + e.key() + ")");
    }
    String username = f.containsKey("username") ? yaml.scalar(f.get("username")) : null;
    String password = f.containsKey("password") ? yaml.scalar(f.get("password")) : null;
    int reserve = f.containsKey("reserve") ? yaml.whole(f.get("reserve"), 0) : 0;
    OptionalInt capacity =
        f.containsKey("capacity")
            ? OptionalInt.of(yaml.whole(f.get("capacity"), 1))
            : OptionalInt.empty();
    if (!f.containsKey("pools")) {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "has no pools: give each workload its pool (" + e.path() + ".pools.<workload>.limit)");
    }
    List<PoolSpec> pools = new ArrayList<>();
    Map<String, YamlTree.Entry> declared =
        yaml.mapping(f.get("pools").value(), f.get("pools").path(), null);
    if (declared.isEmpty()) {
      throw yaml.error(
          f.get("pools").keyNode(),
          f.get("pools").path(),
          "is empty: give each workload its pool (" + e.path() + ".pools.<workload>.limit)");
    }
    for (YamlTree.Entry p : declared.values()) {
      pools.add(readPool(p));
    }
    return new DatabaseSpec(
        e.key(),
        e.path(),
        YamlTree.line(e.keyNode()),
        url,
        Optional.ofNullable(username),
        Optional.ofNullable(password),
        reserve,
        capacity,
        pools);
  }

  private PoolSpec readPool(YamlTree.Entry e) {
    requireName(e, "pool");
    Map<String, YamlTree.Entry> f = yaml.mapping(e.value(), e.path(), POOL_KEYS);
    YamlTree.Entry limitAt = f.containsKey("limit") ? f.get("limit") : defaults.get("limit");
    if (limitAt == null) {
      throw yaml.error(
          e.keyNode(), e.path(), "needs a limit: the number of connections its workload may hold");
    }
    int limit = yaml.whole(limitAt, 1);
    QueueSettings queue = compartmentQueue(e, f);
    Optional<Duration> timeout =
        f.containsKey("connection-timeout")
            ? Optional.of(positiveDuration(f.get("connection-timeout")))
            : Optional.empty();
    return new PoolSpec(e.key(), e.path(), YamlTree.line(e.keyNode()), limit, queue, timeout);
  }

  private @Nullable String budgetName(YamlTree.@Nullable Entry b) {
    if (b == null) {
      return null;
    }
    String budget = yaml.scalar(b).trim();
    if (!budgets.containsKey(budget)) {
      String hint =
          budgets.isEmpty()
              ? " (no budgets are declared)"
              : YamlTree.suggestion(budget, budgets.keySet()).replace("expected one of", "budgets");
      throw yaml.error(b.value(), b.path(), "no budget named " + Printable.quote(budget) + hint);
    }
    return budget;
  }

  private @Nullable Criticality criticality(YamlTree.@Nullable Entry c) {
    if (c == null) {
      return null;
    }
    String word = yaml.scalar(c).trim();
    for (Criticality candidate : Criticality.values()) {
      if (candidate.key().equals(word)) {
        return candidate;
      }
    }
    throw yaml.error(
        c.value(),
        c.path(),
        "must be critical or optional but was "
            + Printable.quote(word)
            + DidYouMean.closest(word, List.of("critical", "optional"))
                .map(s -> " (did you mean '" + s + "'?)")
                .orElse(""));
  }

  private boolean threads(YamlTree.Entry t) {
    String word = yaml.scalar(t).trim();
    if (!word.equals("platform") && !word.equals("virtual")) {
      throw yaml.error(
          t.value(),
          t.path(),
          "must be platform or virtual but was "
              + Printable.quote(word)
              + DidYouMean.closest(word, List.of("platform", "virtual"))
                  .map(x -> " (did you mean '" + x + "'?)")
                  .orElse(""));
    }
    return word.equals("virtual");
  }

  /**
   * Path patterns, a list or one value with commas between them (as Spring reads a list from one
   * property): each starts with {@code /}; the web edge that enforces them checks the rest.
   */
  private List<String> paths(YamlTree.Entry e) {
    List<String> paths = new ArrayList<>();
    if (e.value() instanceof ScalarNode) {
      for (String one : yaml.scalar(e).split(",")) {
        paths.add(path(e, e.value(), e.path(), one.trim()));
      }
      return List.copyOf(paths);
    }
    int i = 0;
    for (Node item : yaml.list(e.value(), e.path())) {
      YamlTree.Entry one =
          new YamlTree.Entry(e.key(), e.path() + "[" + i++ + "]", e.keyNode(), item);
      paths.add(path(one, item, one.path(), yaml.scalar(one).trim()));
    }
    return List.copyOf(paths);
  }

  private String path(YamlTree.Entry e, Node at, String key, String path) {
    if (!path.startsWith("/")) {
      throw yaml.error(
          at,
          key,
          "a path pattern starts with / (/login, /chat/**) but was " + Printable.quote(path));
    }
    return path;
  }

  private String upstream(YamlTree.Entry e) {
    String upstream = yaml.scalar(e).trim();
    if (upstream.isEmpty()) {
      throw yaml.error(
          e.value(), e.path(), "is empty: give a base URL (https://llm.internal:8443) or a host");
    }
    return upstream;
  }

  private static boolean isUnbounded(YamlTree.Entry e) {
    return e.value() instanceof ScalarNode
        && ((ScalarNode) e.value()).getValue().trim().equals(UNBOUNDED);
  }

  private QueueSettings settle(YamlTree.Entry at, Supplier<QueueSettings> q) {
    try {
      return q.get();
    } catch (IllegalArgumentException refused) {
      throw yaml.error(at.value(), at.path(), refused.getMessage());
    }
  }

  private double need(YamlTree.Entry latencyEntry, double rate, Duration latency) {
    try {
      return Sizing.need(rate, latency);
    } catch (IllegalArgumentException tooLarge) {
      throw yaml.error(latencyEntry.value(), latencyEntry.path(), tooLarge.getMessage());
    }
  }

  private void requireName(YamlTree.Entry e, String what) {
    String name = e.key();
    if (name.isBlank()) {
      throw yaml.error(e.keyNode(), e.path(), "a " + what + " needs a name");
    }
    if (name.length() > BulkheadFile.MAX_NAME_LENGTH) {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          "a "
              + what
              + " name of "
              + name.length()
              + " characters is too long: at most "
              + BulkheadFile.MAX_NAME_LENGTH);
    }
    int unsafe = Printable.firstUnsafe(name);
    if (unsafe >= 0) {
      throw yaml.error(
          e.keyNode(),
          e.path(),
          String.format(
              Locale.ROOT,
              "a %s name must be printable but holds U+%04X, a control or invisible character",
              what,
              unsafe));
    }
  }

  private Headroom headroom(YamlTree.Entry e) {
    return parse(e, Headroom::parse);
  }

  private Duration positiveDuration(YamlTree.Entry e) {
    Duration d = parse(e, Quantities::parseDuration);
    if (d.isZero()) {
      throw yaml.error(
          e.value(),
          e.path(),
          "must be above zero but was " + Printable.quote(yaml.scalar(e).trim()));
    }
    return d;
  }

  private <T> T parse(YamlTree.Entry e, Function<String, T> parser) {
    String text = yaml.scalar(e);
    try {
      return parser.apply(text);
    } catch (IllegalArgumentException bad) {
      throw yaml.error(e.value(), e.path(), bad.getMessage());
    }
  }
}
