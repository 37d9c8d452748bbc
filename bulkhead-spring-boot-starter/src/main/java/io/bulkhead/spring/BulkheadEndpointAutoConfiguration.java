package io.bulkhead.spring;

import io.bulkhead.insight.Insight;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Actuator: the read-only {@code bulkheads} endpoint ({@link BulkheadsEndpoint}). */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(Insight.class)
@ConditionalOnAvailableEndpoint(BulkheadsEndpoint.class)
public class BulkheadEndpointAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadEndpointAutoConfiguration() {}

  /** {@code /actuator/bulkheads} and {@code /actuator/bulkheads/{name}}. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadsEndpoint bulkheadsEndpoint(Insight insight) {
    return new BulkheadsEndpoint(insight);
  }
}
