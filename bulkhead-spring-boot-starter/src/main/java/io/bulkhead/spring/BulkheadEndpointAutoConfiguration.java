package io.bulkhead.spring;

import io.bulkhead.insight.Insight;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Actuator: the {@code compartments} endpoint ({@link CompartmentsEndpoint}). */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(Insight.class)
@ConditionalOnAvailableEndpoint(CompartmentsEndpoint.class)
public class BulkheadEndpointAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadEndpointAutoConfiguration() {}

  /** {@code /actuator/compartments} and {@code /actuator/compartments/{name}}. */
  @Bean
  @ConditionalOnMissingBean
  public CompartmentsEndpoint compartmentsEndpoint(Insight insight) {
    return new CompartmentsEndpoint(insight);
  }
}
