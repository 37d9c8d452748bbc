package io.bulkhead.config;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadRegistry;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** What {@link BulkheadFile#build()} makes: the compartments, registered, and their budgets. */
public final class Compartments {

  private final BulkheadRegistry registry;
  private final Map<String, Budget> budgets;

  Compartments(BulkheadRegistry registry, LinkedHashMap<String, Budget> budgets) {
    this.registry = registry;
    this.budgets = Collections.unmodifiableMap(budgets);
  }

  /** The registry holding every compartment of the file, in file order. */
  public BulkheadRegistry registry() {
    return registry;
  }

  /** The budgets by name, in file order. */
  public Map<String, Budget> budgets() {
    return budgets;
  }

  /** The budget named {@code name}, if the file declares one. */
  public Optional<Budget> budget(String name) {
    return Optional.ofNullable(budgets.get(name));
  }
}
