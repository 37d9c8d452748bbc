package io.bulkhead.config;

import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.WorkerPool;
import io.bulkhead.WorkerPoolBuilder;
import io.bulkhead.config.internal.YamlTree;
import io.bulkhead.insight.SizingAdvisor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import org.snakeyaml.engine.v2.common.FlowStyle;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.resolver.ScalarResolver;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The settings of budgets and compartments, validated and sized: one model with two front ends, a
 * YAML file ({@link #load}, {@link #parse}) and the Spring Boot starter's {@code bulkhead.*}
 * properties ({@link #fromMap}), which take the same keys and give the same compartments.
 *
 * <pre>
 * defaults:            # every compartment inherits these, key by key
 *   max-queue: 0
 * budgets:
 *   postgres: 10       # or  postgres: {capacity: 10}
 * compartments:
 *   checkout:
 *     budget: postgres
 *     criticality: critical
 *     rate: 40/s       # expected arrivals ...
 *     latency: 50ms    # ... each holding its slot this long: need 2, limit 2 x 3 = 6
 *   reports: {budget: postgres, limit: 4, max-queue: 2, max-wait: 500ms}
 * worker-pools:        # a WorkerPool each
 *   exports: {budget: postgres, limit: 2, max-queue: 50, max-wait: unbounded, threads: virtual}
 * datasources:         # one pool per workload, opened by bulkhead-jdbc
 *   orders: {url: jdbc:postgresql://db/orders, pools: {checkout: {limit: 6}}}
 * </pre>
 *
 * <p>Every key, its default and what it means is in {@code docs/glossary.md}; {@link #keys()} lists
 * them. {@link #load}, {@link #parse} and {@link #fromMap} fail with a {@link ConfigException}
 * naming the key (and, from a file, the file and line) for malformed YAML, unknown keys (with a
 * "did you mean" suggestion), wrong types, missing or conflicting values and unknown budgets. A
 * budget whose compartments together exceed its capacity is not a load error, so that {@code check}
 * can show the whole table; {@link #budgetUse()} reports it and {@link #build()} refuses it.
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

  private final String file;
  private final Map<Criticality, Headroom> headrooms;
  private final List<BudgetSpec> budgets;
  private final List<CompartmentSpec> compartments;
  private final List<DatabaseSpec> datasources;
  private final List<String> warnings;

  BulkheadFile(
      String file,
      Map<Criticality, Headroom> headrooms,
      List<BudgetSpec> budgets,
      List<CompartmentSpec> compartments,
      List<DatabaseSpec> datasources,
      List<String> warnings) {
    this.file = file;
    this.headrooms = Collections.unmodifiableMap(new EnumMap<>(headrooms));
    this.budgets = List.copyOf(budgets);
    this.compartments = List.copyOf(compartments);
    this.datasources = List.copyOf(datasources);
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
    YamlTree tree = new YamlTree(fileName);
    return new SettingsReader(tree, true).read(tree.compose(yaml));
  }

  /**
   * Validates settings given as nested maps rather than as a file: the other front end, which the
   * Spring Boot starter feeds with the {@code bulkhead.*} properties it bound. Keys are the file's
   * (kebab case); a value is a {@link Map} (a section, a name), a {@link Collection} ({@code
   * paths}) or a scalar, read from its {@code toString()} as a plain YAML scalar is. Nothing is
   * required: empty settings declare no compartments. Errors name {@code source} and the key, with
   * no line.
   *
   * @throws ConfigException for the first value that is wrong, as {@link #parse} would for the same
   *     settings in a file
   */
  public static BulkheadFile fromMap(Map<String, ?> settings, String source) {
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(source, "source");
    YamlTree tree = new YamlTree(source);
    Optional<Node> root = settings.isEmpty() ? Optional.empty() : Optional.of(node(settings));
    return new SettingsReader(tree, false).read(root);
  }

  private static final ScalarResolver SCALARS = new CoreSchema().getScalarResolver();

  /** The node a YAML file would hold for {@code value}. */
  private static Node node(Object value) {
    if (value instanceof Map) {
      List<NodeTuple> entries = new ArrayList<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        entries.add(new NodeTuple(node(String.valueOf(e.getKey())), node(e.getValue())));
      }
      return new MappingNode(Tag.MAP, entries, FlowStyle.BLOCK);
    }
    if (value instanceof Collection) {
      List<Node> items = new ArrayList<>();
      for (Object item : (Collection<?>) value) {
        items.add(node(item));
      }
      return new SequenceNode(Tag.SEQ, items, FlowStyle.BLOCK);
    }
    String text = String.valueOf(value);
    return new ScalarNode(SCALARS.resolve(text, true), text, ScalarStyle.PLAIN);
  }

  /**
   * Every key the settings take, as dotted paths with {@code *} for a name: {@code
   * compartments.*.max-queue}, {@code datasources.*.pools.*.limit}. Both front ends take exactly
   * these.
   */
  public static SortedSet<String> keys() {
    SortedSet<String> keys = new TreeSet<>();
    SettingsReader.DEFAULT_KEYS.forEach(k -> keys.add("defaults." + k));
    SettingsReader.HEADROOM_KEYS.forEach(k -> keys.add("headroom." + k));
    SettingsReader.BUDGET_KEYS.forEach(k -> keys.add("budgets.*." + k));
    SettingsReader.COMPARTMENT_KEYS.stream()
        .filter(k -> !k.equals("adaptive"))
        .forEach(k -> keys.add("compartments.*." + k));
    SettingsReader.ADAPTIVE_KEYS.forEach(k -> keys.add("compartments.*.adaptive." + k));
    SettingsReader.WORKER_POOL_KEYS.forEach(k -> keys.add("worker-pools.*." + k));
    SettingsReader.DATABASE_KEYS.stream()
        .filter(k -> !k.equals("pools"))
        .forEach(k -> keys.add("datasources.*." + k));
    SettingsReader.POOL_KEYS.forEach(k -> keys.add("datasources.*.pools.*." + k));
    return Collections.unmodifiableSortedSet(keys);
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
   * The databases of the {@code datasources} section, in order, each with its pools: what {@code
   * bulkhead-jdbc}'s {@code DatabasePools} opens.
   */
  public List<DatabaseSpec> datasources() {
    return datasources;
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
            c.adaptive().ifPresent(builder::adaptive);
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
    return "BulkheadFile{"
        + file
        + ", budgets="
        + budgets
        + ", compartments="
        + compartments
        + (datasources.isEmpty() ? "" : ", datasources=" + datasources)
        + "}";
  }
}
