package io.bulkhead.config;

import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.QueueSettings;
import io.bulkhead.Sizing;
import io.bulkhead.WorkerPool;
import io.bulkhead.WorkerPoolBuilder;
import io.bulkhead.insight.SizingAdvisor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * A configuration file of budgets and compartments, loaded and validated: the sizing of the
 * checkout-vs-reports outage as a file that can be checked before it is deployed.
 *
 * <pre>
 * headroom:            # optional; these are the defaults
 *   critical: 3        # a fast path the business depends on: about three times its need
 *   optional: 4/3      # a slow path that may be refused: a third above its need
 *
 * budgets:
 *   postgres: 10       # or  postgres: {capacity: 10}
 *
 * compartments:
 *   checkout:
 *     budget: postgres
 *     criticality: critical
 *     rate: 40/s       # expected arrivals
 *     latency: 50ms    # how long one call holds its slot: need 40 × 0.05 = 2, limit 2 × 3 = 6
 *   reports:
 *     budget: postgres
 *     limit: 4         # or give the limit directly
 *     max-queue: 2     # callers that may wait for a slot ...
 *     max-wait: 500ms  # ... and for how long
 *
 * worker-pools:        # pools for background jobs: a WorkerPool each
 *   exports:
 *     budget: postgres
 *     limit: 2         # jobs at once (its workers); or rate and latency, with a criticality
 *     max-queue: 50    # jobs that may wait for a worker (as long as it takes, unless max-wait)
 *     threads: virtual # or platform, the default
 *     cpu-bound: true  # each job keeps a core busy (rendering, compressing), not waiting on I/O
 * </pre>
 *
 * <p>A compartment takes {@code limit}, {@code max-queue}, {@code max-wait}, {@code budget}, {@code
 * criticality}, {@code rate}, {@code latency} and {@code headroom}. Its limit is either given, or
 * derived from {@code rate × latency} (its need) times its {@code headroom}, which defaults to its
 * criticality's, rounded up. A limit given alongside a rate and latency is kept, and the effective
 * headroom ({@code limit / need}) is reported. A worker pool takes the same keys and {@code
 * threads}. {@code max-queue} and {@code max-wait} also take the word {@code unbounded}, and a
 * queue needs a {@code max-wait}. Either may say {@code cpu-bound: true} (the default is false):
 * each call or job in flight keeps a core busy for most of its latency, so its limit should not
 * exceed the CPUs of the container it runs in, which {@link Deployment#check} verifies. The keys
 * are the builders' settings ({@code maxQueue}, {@code maxWait}) in the file's kebab case.
 *
 * <p>{@link #load} and {@link #parse} fail with a {@link ConfigException} naming the file, the line
 * and the key for malformed YAML, unknown keys (with a "did you mean" suggestion), wrong types,
 * missing or conflicting values and unknown budgets. A budget whose compartments together exceed
 * its capacity is not a load error, so that {@code check} can show the whole table; {@link
 * #budgetUse()} reports it and {@link #build()} refuses it.
 *
 * <p>This class is immutable.
 */
public final class BulkheadFile {

  /**
   * The largest file {@link #load} reads, and the longest text {@link #parse} takes: 1 MiB. A
   * configuration file is a few kilobytes; the cap is what keeps a wrong path (a disk image, a log,
   * {@code /dev/zero}) from being read whole into memory.
   */
  public static final int MAX_FILE_BYTES = 1 << 20;

  /**
   * The longest name of a budget, compartment or worker pool. Names become registry keys, metric
   * tags and table columns; 128 is far more than a readable one needs, and keeps every message that
   * names one to a line.
   */
  public static final int MAX_NAME_LENGTH = 128;

  private static final Set<String> TOP_KEYS =
      Set.of("headroom", "budgets", "compartments", "worker-pools");
  private static final Set<String> HEADROOM_KEYS = Set.of("critical", "optional");
  private static final Set<String> BUDGET_KEYS = Set.of("capacity");
  private static final Set<String> COMPARTMENT_KEYS =
      Set.of(
          "limit",
          "max-queue",
          "max-wait",
          "budget",
          "criticality",
          "rate",
          "latency",
          "headroom",
          "cpu-bound");
  private static final Set<String> WORKER_KEYS =
      Set.of(
          "limit",
          "max-queue",
          "max-wait",
          "budget",
          "criticality",
          "rate",
          "latency",
          "headroom",
          "threads",
          "cpu-bound");

  private final String file;
  private final Map<Criticality, Headroom> headrooms;
  private final List<BudgetSpec> budgets;
  private final List<CompartmentSpec> compartments;
  private final List<String> warnings;

  private BulkheadFile(
      String file,
      Map<Criticality, Headroom> headrooms,
      List<BudgetSpec> budgets,
      List<CompartmentSpec> compartments,
      List<String> warnings) {
    this.file = file;
    this.headrooms = Collections.unmodifiableMap(headrooms);
    this.budgets = List.copyOf(budgets);
    this.compartments = List.copyOf(compartments);
    this.warnings = List.copyOf(warnings);
  }

  /**
   * Reads and validates the file at {@code path}, which errors name as {@code path} was written.
   *
   * @throws ConfigException if the file cannot be read, is not valid YAML, or is not a valid
   *     configuration
   */
  public static BulkheadFile load(Path path) {
    Objects.requireNonNull(path, "path");
    String name = path.toString();
    String text = YamlTree.read(path, name);
    return parse(text, name);
  }

  /**
   * Validates {@code yaml} as if read from a file called {@code fileName}.
   *
   * @throws ConfigException if it is not valid YAML or not a valid configuration
   */
  public static BulkheadFile parse(String yaml, String fileName) {
    Objects.requireNonNull(yaml, "yaml");
    Objects.requireNonNull(fileName, "fileName");
    if (yaml.length() > MAX_FILE_BYTES) { // more chars than the cap: more UTF-8 bytes too
      throw YamlTree.tooLarge(fileName);
    }
    return new Reader(new YamlTree(fileName)).read(yaml);
  }

  /** The file's name, as errors give it. */
  public String file() {
    return file;
  }

  /** The headroom a compartment of this criticality gets: the default, or the file's override. */
  public Headroom headroom(Criticality criticality) {
    return headrooms.get(Objects.requireNonNull(criticality, "criticality"));
  }

  /** The budgets, in file order. */
  public List<BudgetSpec> budgets() {
    return budgets;
  }

  /**
   * The compartments, in file order, with their limits derived: those of the {@code compartments}
   * section, then the worker pools of the {@code worker-pools} section ({@link
   * CompartmentSpec#workerPool()}).
   */
  public List<CompartmentSpec> compartments() {
    return compartments;
  }

  /**
   * Things that are allowed but probably wrong, one line each with file, line and key: a limit
   * given below the compartment's own need, which rejects calls even at the expected rate.
   */
  public List<String> warnings() {
    return warnings;
  }

  /** For every budget, in file order, the limits drawn on it against its capacity. */
  public List<BudgetUse> budgetUse() {
    List<BudgetUse> uses = new ArrayList<>();
    for (BudgetSpec b : budgets) {
      LinkedHashMap<String, Integer> shares = new LinkedHashMap<>();
      for (CompartmentSpec c : compartments) {
        if (c.budget().filter(b.name()::equals).isPresent()) {
          shares.put(c.name(), c.limit());
        }
      }
      uses.add(new BudgetUse(b, shares));
    }
    return uses;
  }

  /**
   * Builds the budgets and the compartments, registered in a new registry in file order.
   *
   * @throws ConfigException if a budget is over-subscribed: the message lists every compartment
   *     drawing on it, with its limit, and the total against the capacity
   */
  public Compartments build() {
    for (BudgetUse use : budgetUse()) {
      if (use.overSubscribed()) {
        throw new ConfigException(
            file, use.budget().line(), "budgets." + use.budget().name(), use.describe());
      }
    }
    LinkedHashMap<String, Budget> built = new LinkedHashMap<>();
    for (BudgetSpec b : budgets) {
      built.put(b.name(), Budget.of(b.name(), b.capacity()));
    }
    BulkheadRegistry registry = BulkheadRegistry.create();
    LinkedHashMap<String, WorkerPool> pools = new LinkedHashMap<>();
    try {
      for (CompartmentSpec c : compartments) {
        try {
          if (c.workerPool()) {
            WorkerPoolBuilder builder =
                WorkerPool.builder(c.name()).limit(c.limit()).queue(c.queue());
            c.budget().map(built::get).ifPresent(builder::budget);
            if (c.virtualThreads()) {
              builder.virtualThreads();
            }
            WorkerPool pool = builder.build();
            pools.put(c.name(), pool);
            registry.register(pool.compartment());
          } else {
            BulkheadBuilder builder = Bulkhead.builder(c.name()).limit(c.limit()).queue(c.queue());
            c.budget().map(built::get).ifPresent(builder::budget);
            registry.register(builder.build());
          }
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
          throw new ConfigException(file, c.line(), c.path(), e.getMessage(), e);
        }
      }
    } catch (ConfigException e) {
      for (WorkerPool started : pools.values()) {
        try {
          started.shutdown(Duration.ZERO); // nothing was submitted yet: nothing to hand back
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      throw e;
    }
    return new Compartments(registry, built, pools);
  }

  /**
   * Returns an advisor that applies to each compartment the headroom the file gives it, and the
   * critical headroom to compartments it does not know.
   */
  public SizingAdvisor advisor() {
    SizingAdvisor.Builder b =
        SizingAdvisor.builder().headroom(headroom(Criticality.CRITICAL).factor());
    for (CompartmentSpec c : compartments) {
      Optional<Headroom> h = c.headroom().or(() -> c.criticality().map(headrooms::get));
      h.ifPresent(headroom -> b.headroom(c.name(), headroom.factor()));
    }
    return b.build();
  }

  @Override
  public String toString() {
    return "BulkheadFile{" + file + ", budgets=" + budgets + ", compartments=" + compartments + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /** One pass over the node tree; every check throws at the first problem with its position. */
  private static final class Reader {

    private final YamlTree yaml;
    private final Map<Criticality, Headroom> headrooms = new EnumMap<>(Criticality.class);
    private final LinkedHashMap<String, BudgetSpec> budgets = new LinkedHashMap<>();
    private final List<CompartmentSpec> compartments = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();

    Reader(YamlTree yaml) {
      this.yaml = yaml;
      for (Criticality c : Criticality.values()) {
        headrooms.put(c, c.defaultHeadroom());
      }
    }

    BulkheadFile read(String text) {
      Optional<Node> root = yaml.compose(text);
      if (root.isEmpty()) {
        throw new ConfigException(
            yaml.file, 0, null, "the file is empty: expected 'budgets' and 'compartments'");
      }
      Map<String, YamlTree.Entry> top = yaml.mapping(root.get(), null, TOP_KEYS);
      if (top.containsKey("headroom")) {
        readHeadrooms(top.get("headroom"));
      }
      if (top.containsKey("budgets")) {
        for (YamlTree.Entry e :
            yaml.mapping(top.get("budgets").value(), "budgets", null).values()) {
          readBudget(e);
        }
      }
      YamlTree.Entry section = top.get("compartments");
      if (section == null && !top.containsKey("worker-pools")) {
        throw new ConfigException(
            yaml.file,
            YamlTree.line(root.get()),
            "compartments",
            "missing: the file declares no compartments (nor worker-pools)");
      }
      if (section != null) {
        Map<String, YamlTree.Entry> declared = yaml.mapping(section.value(), "compartments", null);
        if (declared.isEmpty()) {
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
      return new BulkheadFile(
          yaml.file, headrooms, new ArrayList<>(budgets.values()), compartments, warnings);
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
        Budget.of(
            e.key(), capacity); // the bounds build() will apply, by the code that applies them
      } catch (IllegalArgumentException refused) {
        throw yaml.error(e.keyNode(), e.path(), refused.getMessage());
      }
      budgets.put(e.key(), new BudgetSpec(e.key(), capacity, YamlTree.line(e.keyNode())));
    }

    private CompartmentSpec readCompartment(YamlTree.Entry e, boolean pool) {
      requireName(e, pool ? "worker pool" : "compartment");
      Map<String, YamlTree.Entry> f =
          yaml.mapping(e.value(), e.path(), pool ? WORKER_KEYS : COMPARTMENT_KEYS);
      String limitKey = "limit";

      Criticality criticality = null;
      if (f.containsKey("criticality")) {
        YamlTree.Entry c = f.get("criticality");
        String word = yaml.scalar(c).trim();
        for (Criticality candidate : Criticality.values()) {
          if (candidate.key().equals(word)) {
            criticality = candidate;
          }
        }
        if (criticality == null) {
          throw yaml.error(
              c.value(),
              c.path(),
              "must be critical or optional but was "
                  + Printable.quote(word)
                  + DidYouMean.closest(word, List.of("critical", "optional"))
                      .map(s -> " (did you mean '" + s + "'?)")
                      .orElse(""));
        }
      }
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
                + (latency == null
                    ? ", how long one call holds its slot, like 50ms"
                    : ", like 40/s")
                + ")");
      }
      Headroom headroom = f.containsKey("headroom") ? headroom(f.get("headroom")) : null;

      int limit;
      boolean derived;
      Headroom applied = null;
      if (f.containsKey(limitKey)) {
        if (headroom != null) {
          throw yaml.error(
              f.get("headroom").keyNode(),
              f.get("headroom").path(),
              "give a headroom or a limit, not both: the limit is either given or derived from"
                  + " rate x latency x headroom");
        }
        limit = yaml.whole(f.get(limitKey), 1);
        derived = false;
        if (latency != null) {
          double need = need(f.get("latency"), rate, latency);
          if (limit < need) {
            warnings.add(
                yaml.file
                    + ":"
                    + YamlTree.line(f.get(limitKey).value())
                    + ": "
                    + e.path()
                    + "."
                    + limitKey
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
              "derives its "
                  + limitKey
                  + " from rate and latency but has no"
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
      } else {
        throw yaml.error(
            e.keyNode(),
            e.path(),
            "needs a limit, or a rate and a latency to derive one from (Little's law: need = rate"
                + " x latency)");
      }

      QueueSettings queue = QueueSettings.DEFAULT;
      if (f.containsKey("max-queue")) {
        YamlTree.Entry q = f.get("max-queue");
        if (isUnbounded(q)) {
          queue = queue.withUnboundedQueue();
        } else {
          int n = yaml.whole(q, 0);
          queue = check(q, () -> QueueSettings.DEFAULT.withMaxQueue(n));
        }
      }
      if (f.containsKey("max-wait")) {
        YamlTree.Entry w = f.get("max-wait");
        if (isUnbounded(w)) {
          queue = queue.withUnboundedWait();
        } else {
          Duration d = positiveDuration(w);
          QueueSettings q = queue;
          queue = check(w, () -> q.withMaxWait(d));
        }
      }
      if (queue.mayQueue() && !f.containsKey("max-wait")) {
        throw yaml.error(
            f.get("max-queue").keyNode(),
            f.get("max-queue").path(),
            "lets "
                + callers(queue)
                + " wait but there is no max-wait: add max-wait"
                + " (how long one may wait, like 100ms, or unbounded)");
      }
      if (!queue.mayQueue() && f.containsKey("max-wait")) {
        throw yaml.error(
            f.get("max-wait").keyNode(),
            f.get("max-wait").path(),
            "has no effect without a"
                + " queue: add max-queue (how many callers may wait), or remove max-wait");
      }

      String budget = null;
      if (f.containsKey("budget")) {
        YamlTree.Entry b = f.get("budget");
        budget = yaml.scalar(b).trim();
        if (!budgets.containsKey(budget)) {
          String hint =
              budgets.isEmpty()
                  ? " (the file declares no budgets)"
                  : YamlTree.suggestion(budget, budgets.keySet())
                      .replace("expected one of", "budgets");
          throw yaml.error(
              b.value(), b.path(), "no budget named " + Printable.quote(budget) + hint);
        }
      }
      boolean virtual = false;
      if (f.containsKey("threads")) {
        YamlTree.Entry t = f.get("threads");
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
        virtual = word.equals("virtual");
      }
      boolean cpuBound = f.containsKey("cpu-bound") && yaml.bool(f.get("cpu-bound"));
      checkWithBuilder(e, f, limitKey, pool, limit);
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
          cpuBound);
    }

    /**
     * Hands the limit to the builder that {@link BulkheadFile#build()} will use, so that a value
     * the builder refuses is refused here, at its own key and line, and the loader's bounds can
     * never drift from the builders'. The queue settings were checked by {@link QueueSettings}
     * itself. Nothing is built.
     */
    private void checkWithBuilder(
        YamlTree.Entry e, Map<String, YamlTree.Entry> f, String limitKey, boolean pool, int limit) {
      YamlTree.Entry limitAt = f.getOrDefault(limitKey, e);
      if (pool) {
        WorkerPoolBuilder b = builder(e, () -> WorkerPool.builder(e.key()));
        apply(limitAt, () -> b.limit(limit));
      } else {
        BulkheadBuilder b = builder(e, () -> Bulkhead.builder(e.key()));
        apply(limitAt, () -> b.limit(limit));
      }
    }

    private static String callers(QueueSettings queue) {
      if (queue.maxQueue().isEmpty()) {
        return "any number of callers";
      }
      int n = queue.maxQueue().getAsInt();
      return n + " caller" + (n == 1 ? "" : "s");
    }

    private static boolean isUnbounded(YamlTree.Entry e) {
      return e.value() instanceof ScalarNode
          && ((ScalarNode) e.value()).getValue().trim().equals("unbounded");
    }

    private QueueSettings check(YamlTree.Entry at, java.util.function.Supplier<QueueSettings> q) {
      try {
        return q.get();
      } catch (IllegalArgumentException refused) {
        throw yaml.error(at.value(), at.path(), refused.getMessage());
      }
    }

    private <B> B builder(YamlTree.Entry e, java.util.function.Supplier<B> start) {
      try {
        return start.get();
      } catch (IllegalArgumentException refused) {
        throw yaml.error(e.keyNode(), e.path(), refused.getMessage());
      }
    }

    private void apply(YamlTree.Entry at, Runnable setter) {
      try {
        setter.run();
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
      if (name.length() > MAX_NAME_LENGTH) {
        throw yaml.error(
            e.keyNode(),
            e.path(),
            "a "
                + what
                + " name of "
                + name.length()
                + " characters is too long: at most "
                + MAX_NAME_LENGTH);
      }
      int unsafe = Printable.firstUnsafe(name);
      if (unsafe >= 0) {
        throw yaml.error(
            e.keyNode(),
            e.path(),
            String.format(
                Locale.ROOT,
                "a %s name must be printable"
                    + " but holds U+%04X, a control or invisible character",
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
}
