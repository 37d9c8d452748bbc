package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.insight.Insight;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Actuator health: the {@code bulkheads} component ({@code /actuator/health/bulkheads}), one entry
 * per compartment with its diagnosis; off with {@code management.health.bulkheads.enabled=false}.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean({Insight.class, BulkheadRegistry.class})
@ConditionalOnEnabledHealthIndicator("bulkheads")
@EnableConfigurationProperties(BulkheadsHealthProperties.class)
public class BulkheadHealthAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadHealthAutoConfiguration() {}

  /** The component; its bean name makes its name, {@code bulkheads}. */
  @Bean
  HealthIndicator bulkheadsHealthIndicator(
      BulkheadRegistry registry, Insight insight, BulkheadsHealthProperties properties) {
    return new BulkheadsHealthIndicator(registry, insight, properties.getDownOn());
  }
}
