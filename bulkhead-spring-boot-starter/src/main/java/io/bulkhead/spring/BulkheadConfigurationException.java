package io.bulkhead.spring;

import io.bulkhead.config.ConfigException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * A {@code bulkhead.*} setting or a {@link Bulkhead @Bulkhead} use that cannot work: start-up stops
 * with one line naming what is wrong ({@link BulkheadFailureAnalyzer} prints it without a stack
 * trace).
 */
final class BulkheadConfigurationException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final String action;

  BulkheadConfigurationException(String message, String action) {
    super(message);
    this.action = action;
  }

  /** A setting that is wrong: {@code bulkhead.compartments.llm.limit=0: <why>}. */
  static BulkheadConfigurationException property(String key, Object value, String why) {
    return new BulkheadConfigurationException(
        key + "=" + value + ": " + why,
        "Correct "
            + key
            + " in the application's configuration (application.yml, properties or"
            + " environment).");
  }

  /**
   * What the settings model refused: {@code bulkhead.compartments.llm.limit: must be at least 1 but
   * was 0}.
   */
  static BulkheadConfigurationException key(String key, ConfigException refused) {
    BulkheadConfigurationException e =
        new BulkheadConfigurationException(
            key + ": " + refused.problem(),
            "Correct "
                + key
                + " in the application's configuration (application.yml, properties or"
                + " environment).");
    e.initCause(refused);
    return e;
  }

  /** A setting that is missing: {@code bulkhead.compartments.llm.limit is not set: <why>}. */
  static BulkheadConfigurationException missing(String key, String why) {
    return new BulkheadConfigurationException(
        key + " is not set: " + why,
        "Set "
            + key
            + " in the application's configuration (application.yml, properties or"
            + " environment).");
  }

  /** A method as a message names it: {@code com.example.Chat.complete(String)}. */
  static String describe(Method method) {
    return method.getDeclaringClass().getName() + "." + signature(method);
  }

  /** A method's name and parameter types: {@code complete(String)}. */
  static String signature(Method method) {
    return method.getName()
        + "("
        + String.join(
            ", ", Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList())
        + ")";
  }

  /** What the failure report suggests doing. */
  String action() {
    return action;
  }
}
