package io.bulkhead.spring;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.LimitController;
import io.bulkhead.httpclient.BaseUrl;
import io.bulkhead.internal.Urls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Turns {@link BulkheadProperties} into compartments, each key its own or, when it gives none, the
 * one of {@code bulkhead.defaults}, checking every value on the way: the first one that is wrong
 * stops start-up with a {@link BulkheadConfigurationException} naming its key and value. The checks
 * of the values themselves are the core builders' (their messages are kept); this class adds the
 * key and checks what only the configuration knows (a budget name that is not defined, a missing
 * setting).
 */
final class CompartmentFactory {

  private static final String COMPARTMENTS = BulkheadProperties.PREFIX + ".compartments.";
  private static final String BUDGETS = BulkheadProperties.PREFIX + ".budgets.";
  private static final String DEFAULTS = BulkheadProperties.PREFIX + ".defaults.";

  /** A value and the key it came from: the compartment's own, or the one of bulkhead.defaults. */
  private record Setting<T>(String key, @Nullable T value) {

    /** The compartment's own {@code value} under {@code name}, else the default's. */
    static <T> Setting<T> of(
        String prefix, String name, @Nullable T value, @Nullable T defaultValue) {
      return value != null
          ? new Setting<>(prefix + name, value)
          : new Setting<>(DEFAULTS + name, defaultValue);
    }
  }

  /** An upstream and the compartment its outgoing calls enter. */
  record UpstreamRoute(BaseUrl upstream, String compartment) {}

  private CompartmentFactory() {}

  /**
   * A registry holding one {@link Bulkhead} per configured compartment, in the configured order;
   * each compartment with a {@code budget} draws its limit from that budget.
   *
   * @throws BulkheadConfigurationException for the first value that is wrong, and for a budget that
   *     is over-subscribed (with the core's message listing every share)
   */
  static BulkheadRegistry registry(BulkheadProperties properties) {
    Map<String, Budget> budgets = new LinkedHashMap<>();
    properties
        .getBudgets()
        .forEach(
            (name, settings) -> {
              String key = BUDGETS + name + ".capacity";
              Integer capacity = settings.getCapacity();
              if (capacity == null) {
                throw BulkheadConfigurationException.missing(
                    key, "a budget needs the capacity of the resource it stands for");
              }
              budgets.put(name, build(key, capacity, () -> Budget.of(name, capacity)));
            });
    checkDefaults(properties.getDefaults(), budgets);
    BulkheadRegistry registry = BulkheadRegistry.create();
    EdgePath.check(properties); // every paths entry, whichever web stack enforces them
    properties
        .getCompartments()
        .forEach(
            (name, settings) -> {
              registry.register(compartment(name, settings, properties.getDefaults(), budgets));
              String upstream = settings.getUpstream();
              if (upstream != null) {
                upstream(name, upstream);
              }
            });
    return registry;
  }

  /** The configured upstreams, in the order of their compartments. */
  static List<UpstreamRoute> upstreams(BulkheadProperties properties) {
    List<UpstreamRoute> routes = new ArrayList<>();
    properties
        .getCompartments()
        .forEach(
            (name, settings) -> {
              String upstream = settings.getUpstream();
              if (upstream != null) {
                routes.add(new UpstreamRoute(upstream(name, upstream), name));
              }
            });
    return List.copyOf(routes);
  }

  /**
   * Checks {@code bulkhead.defaults} on its own, so a wrong default stops start-up (named under its
   * own key) even when every compartment gives its own value.
   */
  private static void checkDefaults(
      BulkheadProperties.Defaults defaults, Map<String, Budget> budgets) {
    BulkheadBuilder builder = Bulkhead.builder("defaults");
    if (defaults.getLimit() != null) {
      apply(DEFAULTS + "limit", defaults.getLimit(), builder::limit);
    }
    apply(DEFAULTS + "max-queue", defaults.getMaxQueue(), builder::maxQueue);
    if (defaults.getMaxWait() != null) {
      apply(DEFAULTS + "max-wait", defaults.getMaxWait(), builder::maxWait);
    }
    if (defaults.getBudget() != null) {
      budget(new Setting<>(DEFAULTS + "budget", defaults.getBudget()), budgets);
    }
  }

  private static Bulkhead compartment(
      String name,
      BulkheadProperties.Compartment settings,
      BulkheadProperties.Defaults defaults,
      Map<String, Budget> budgets) {
    String prefix = COMPARTMENTS + name + ".";
    BulkheadBuilder builder = build(prefix + "name", name, () -> Bulkhead.builder(name));
    Setting<Integer> limit = Setting.of(prefix, "limit", settings.getLimit(), defaults.getLimit());
    if (limit.value() == null) {
      throw BulkheadConfigurationException.missing(
          prefix + "limit",
          "every compartment needs the number of calls it lets in flight at once (or set "
              + DEFAULTS
              + "limit for every compartment)");
    }
    apply(limit.key(), limit.value(), builder::limit);
    Setting<Integer> maxQueue =
        Setting.of(prefix, "max-queue", settings.getMaxQueue(), defaults.getMaxQueue());
    int queue = maxQueue.value() == null ? 0 : maxQueue.value();
    apply(maxQueue.key(), queue, builder::maxQueue);
    Setting<Duration> maxWait =
        Setting.of(prefix, "max-wait", settings.getMaxWait(), defaults.getMaxWait());
    Duration wait = maxWait.value();
    if (wait != null) {
      apply(maxWait.key(), wait, builder::maxWait);
      if (queue > 0 && wait.isZero()) {
        throw BulkheadConfigurationException.property(
            maxWait.key(),
            wait,
            "the "
                + queue
                + " callers max-queue lets wait would be rejected the moment they queue: set max-wait above zero, or"
                + " max-queue to 0 to reject at once");
      }
    } else if (queue > 0) {
      throw BulkheadConfigurationException.missing(
          prefix + "max-wait",
          (maxQueue.key().startsWith(DEFAULTS) ? maxQueue.key() : "max-queue")
              + " lets "
              + queue
              + " callers wait, so say how long one may wait (500ms, 1s), here or as "
              + DEFAULTS
              + "max-wait");
    }
    Setting<String> budgetName =
        Setting.of(prefix, "budget", settings.getBudget(), defaults.getBudget());
    if (budgetName.value() != null) {
      builder.budget(budget(budgetName, budgets));
    }
    BulkheadProperties.Adaptive adaptive = settings.getAdaptive();
    if (adaptive != null) {
      builder.adaptive(adaptive(prefix + "adaptive.", adaptive));
    }
    // What build() still refuses is the budget being over-subscribed: the core names every share.
    Setting<?> blamed = budgetName.value() == null ? limit : budgetName;
    return build(blamed.key(), blamed.value(), builder::build);
  }

  private static AdaptiveLimit adaptive(String prefix, BulkheadProperties.Adaptive settings) {
    String name = settings.getController();
    LimitController controller =
        switch (name == null ? "" : name) {
          case "gradient" -> LimitController.gradient();
          case "aimd" -> LimitController.aimd();
          default ->
              throw BulkheadConfigurationException.property(
                  prefix + "controller", name, "the controllers are gradient and aimd");
        };
    Integer min = settings.getMin();
    Integer max = settings.getMax();
    if (min == null) {
      throw BulkheadConfigurationException.missing(
          prefix + "min", "an adaptive limit moves within [min, max]");
    }
    if (max == null) {
      throw BulkheadConfigurationException.missing(
          prefix + "max", "an adaptive limit moves within [min, max]");
    }
    return build(
        prefix + "max", max, () -> new AdaptiveLimit(controller, min, max, settings.getInterval()));
  }

  private static Budget budget(Setting<String> name, Map<String, Budget> budgets) {
    Budget budget = budgets.get(name.value());
    if (budget == null) {
      throw BulkheadConfigurationException.property(
          name.key(),
          name.value(),
          "no budget of that name; the budgets are "
              + budgets.keySet()
              + " (define it as "
              + BUDGETS
              + name.value()
              + ".capacity)");
    }
    return budget;
  }

  private static BaseUrl upstream(String name, String value) {
    // The value may carry a user and password: the refusal names it masked.
    return build(COMPARTMENTS + name + ".upstream", Urls.masked(value), () -> BaseUrl.parse(value));
  }

  private static <T> void apply(String key, T value, Consumer<T> setter) {
    build(
        key,
        value,
        () -> {
          setter.accept(value);
          return value;
        });
  }

  /** Runs a core factory or check, naming {@code key} and {@code value} in what it refuses. */
  private static <T> T build(String key, Object value, Supplier<T> factory) {
    try {
      return factory.get();
    } catch (IllegalArgumentException e) {
      throw BulkheadConfigurationException.property(key, value, e.getMessage());
    }
  }
}
