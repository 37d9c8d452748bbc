package io.bulkhead.spring;

import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.convert.ConversionFailedException;

/**
 * Turns a start-up failure caused by a {@code bulkhead.*} setting or a {@link Bulkhead @Bulkhead}
 * into one line naming the key and the value, instead of a stack trace:
 *
 * <pre>
 * bulkhead.compartments.llm.limit: must be at least 1 but was 0
 * bulkhead.compartments.llm.limit=ten: cannot be read as an Integer (from class path resource [application.yml] - 4:17)
 * bulkhead.compartments.llm.limt=3: not a setting of bulkhead (from ...)
 * </pre>
 *
 * It runs before Spring Boot's own analyzers and leaves every other failure to them.
 */
public final class BulkheadFailureAnalyzer implements FailureAnalyzer, Ordered {

  private static final String PREFIX = BulkheadProperties.PREFIX + ".";

  /** Created by Spring Boot from {@code META-INF/spring.factories}. */
  public BulkheadFailureAnalyzer() {}

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE; // before BindFailureAnalyzer, which would print a table
  }

  @Override
  public @Nullable FailureAnalysis analyze(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BulkheadConfigurationException e) {
        return new FailureAnalysis(e.getMessage(), e.action(), e);
      }
      if (t instanceof BindException e) {
        return bindFailure(e);
      }
    }
    return null;
  }

  private static @Nullable FailureAnalysis bindFailure(BindException e) {
    if (e.getCause() instanceof UnboundConfigurationPropertiesException unbound
        && e.getName().toString().equals(BulkheadProperties.PREFIX)) {
      String keys =
          unbound.getUnboundProperties().stream()
              .map(p -> p.getName() + "=" + p.getValue() + origin(p))
              .collect(Collectors.joining(", "));
      return new FailureAnalysis(
          keys
              + ": not a setting of "
              + BulkheadProperties.PREFIX
              + " (the keys are the settings file's: a compartment takes limit, max-queue, max-wait,"
              + " budget, criticality, headroom, cpu-bound, rate, latency, paths and upstream; a"
              + " budget takes capacity; a datasource takes url, username, password, reserve,"
              + " capacity and pools, whose entries take limit, max-queue, max-wait and"
              + " connection-timeout)",
          "Correct the key's spelling or remove it.",
          e);
    }
    ConfigurationProperty property = e.getProperty();
    if (property == null || !property.getName().toString().startsWith(PREFIX)) {
      return null;
    }
    String why =
        e.getCause() instanceof ConversionFailedException conversion
            ? "cannot be read as " + article(conversion.getTargetType().getType().getSimpleName())
            : "cannot be bound ("
                + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage())
                + ")";
    return new FailureAnalysis(
        property.getName() + "=" + property.getValue() + ": " + why + origin(property),
        "Correct " + property.getName() + " in the application's configuration.",
        e);
  }

  private static String article(String type) {
    return ("AEIOU".indexOf(type.charAt(0)) >= 0 ? "an " : "a ") + type;
  }

  private static String origin(ConfigurationProperty property) {
    return property.getOrigin() == null ? "" : " (from " + property.getOrigin() + ")";
  }
}
