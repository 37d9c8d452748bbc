package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.insight.Insight;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator: the {@code compartments} endpoint ({@link CompartmentsEndpoint}) and the {@code
 * compartmentevents} endpoint ({@link CompartmentEventsEndpoint}), each when it is available
 * (exposed, and its access not {@code none}).
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean({Insight.class, BulkheadRegistry.class})
public class BulkheadEndpointAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadEndpointAutoConfiguration() {}

  /** {@code /actuator/compartments} and {@code /actuator/compartments/{name}}. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint(CompartmentsEndpoint.class)
  public CompartmentsEndpoint compartmentsEndpoint(Insight insight, BulkheadRegistry registry) {
    return new CompartmentsEndpoint(insight, registry);
  }

  /** The recent rejections, recorded only while their endpoint is available. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnAvailableEndpoint(CompartmentEventsEndpoint.class)
  static class Events {

    /** Records the last rejections of every compartment of the registry. */
    @Bean
    RecentRejections compartmentRecentRejections(BulkheadRegistry registry) {
      return new RecentRejections(registry);
    }

    /** {@code /actuator/compartmentevents} and {@code /actuator/compartmentevents/{name}}. */
    @Bean
    @ConditionalOnMissingBean
    CompartmentEventsEndpoint compartmentEventsEndpoint(RecentRejections rejections) {
      return new CompartmentEventsEndpoint(rejections);
    }
  }
}
