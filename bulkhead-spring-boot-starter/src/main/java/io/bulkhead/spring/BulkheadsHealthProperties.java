package io.bulkhead.spring;

import io.bulkhead.insight.Diagnosis;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The settings of the {@code bulkheads} health component, {@code management.health.bulkheads.*}.
 */
@ConfigurationProperties(prefix = "management.health.bulkheads")
public class BulkheadsHealthProperties {

  /**
   * The diagnosis states that make the component DOWN (and with it the application's health):
   * saturated, limit-too-low, dependency-degrading. Empty (the default): always UP, each
   * compartment reported with its state.
   */
  private Set<Diagnosis.State> downOn = new LinkedHashSet<>();

  /** Creates empty settings; Spring binds them. */
  public BulkheadsHealthProperties() {}

  /** The states that make the component DOWN. */
  public Set<Diagnosis.State> getDownOn() {
    return downOn;
  }

  /** Sets the states that make the component DOWN. */
  public void setDownOn(Set<Diagnosis.State> downOn) {
    this.downOn = downOn;
  }
}
