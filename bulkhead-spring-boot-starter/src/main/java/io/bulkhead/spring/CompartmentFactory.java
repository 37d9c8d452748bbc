package io.bulkhead.spring;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.LimitController;
import io.bulkhead.internal.Urls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Turns {@link BulkheadProperties} into compartments, checking every value on the way: the first
 * one that is wrong stops start-up with a {@link BulkheadConfigurationException} naming its key and
 * value. The checks of the values themselves are the core builders' (their messages are kept); this
 * class adds the key and checks what only the configuration knows (a budget name that is not
 * defined, a missing setting).
 */
final class CompartmentFactory {

  private static final String COMPARTMENTS = BulkheadProperties.PREFIX + ".compartments.";
  private static final String BUDGETS = BulkheadProperties.PREFIX + ".budgets.";

  /** An upstream and the compartment its outgoing calls enter. */
  record UpstreamRoute(Upstream upstream, String compartment) {}

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
    BulkheadRegistry registry = BulkheadRegistry.create();
    EdgePath.check(properties); // every paths entry, whichever web stack enforces them
    properties
        .getCompartments()
        .forEach(
            (name, settings) -> {
              registry.register(compartment(name, settings, budgets));
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

  private static Bulkhead compartment(
      String name, BulkheadProperties.Compartment settings, Map<String, Budget> budgets) {
    String prefix = COMPARTMENTS + name + ".";
    BulkheadBuilder builder = build(prefix + "name", name, () -> Bulkhead.builder(name));
    Integer limit = settings.getLimit();
    if (limit == null) {
      throw BulkheadConfigurationException.missing(
          prefix + "limit",
          "every compartment needs the number of calls it lets in flight at once");
    }
    apply(prefix + "limit", limit, builder::limit);
    int maxQueue = settings.getMaxQueue();
    apply(prefix + "max-queue", maxQueue, builder::maxQueue);
    Duration maxWait = settings.getMaxWait();
    if (maxWait != null) {
      apply(prefix + "max-wait", maxWait, builder::maxWait);
      if (maxQueue > 0 && maxWait.isZero()) {
        throw BulkheadConfigurationException.property(
            prefix + "max-wait",
            maxWait,
            "the "
                + maxQueue
                + " callers max-queue lets wait would be rejected the moment they"
                + " queue: set max-wait above zero, or max-queue to 0 to reject at once");
      }
    } else if (maxQueue > 0) {
      throw BulkheadConfigurationException.missing(
          prefix + "max-wait",
          "max-queue lets " + maxQueue + " callers wait, so say how long one may wait (500ms, 1s)");
    }
    String budgetName = settings.getBudget();
    if (budgetName != null) {
      Budget budget = budgets.get(budgetName);
      if (budget == null) {
        throw BulkheadConfigurationException.property(
            prefix + "budget",
            budgetName,
            "no budget of that name; the budgets are "
                + budgets.keySet()
                + " (define it as "
                + BUDGETS
                + budgetName
                + ".capacity)");
      }
      builder.budget(budget);
    }
    BulkheadProperties.Adaptive adaptive = settings.getAdaptive();
    if (adaptive != null) {
      builder.adaptive(adaptive(prefix + "adaptive.", adaptive));
    }
    // What build() still refuses is the budget being over-subscribed: the core names every share.
    String budgetKey = budgetName == null ? prefix + "limit" : prefix + "budget";
    Object budgetValue = budgetName == null ? limit : budgetName;
    return build(budgetKey, budgetValue, builder::build);
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

  private static Upstream upstream(String name, String value) {
    // The value may carry a user and password: the refusal names it masked.
    return build(
        COMPARTMENTS + name + ".upstream", Urls.masked(value), () -> Upstream.parse(value));
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
