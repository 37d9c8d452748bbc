package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.reactor.BulkheadOperator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Outbound, reactive: every {@code WebClient.Builder} Spring Boot builds routes the exchanges to a
 * configured {@code bulkhead.compartments.<name>.upstream} into that compartment ({@link
 * BulkheadExchangeFilterFunction}). Needs WebFlux's {@code WebClient}, Spring Boot's {@code
 * spring-boot-webclient} and {@code bulkhead-reactor}, through which exchanges wait for a slot
 * without a thread.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass({WebClient.class, WebClientCustomizer.class, BulkheadOperator.class})
public class BulkheadWebClientAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadWebClientAutoConfiguration() {}

  /** Adds the routing filter to every auto-configured {@code WebClient.Builder}. */
  @Bean
  public WebClientCustomizer compartmentWebClientCustomizer(
      BulkheadRegistry registry, BulkheadFile settings) {
    BulkheadExchangeFilterFunction filter =
        BulkheadExchangeFilterFunction.routing(registry, CompartmentFactory.upstreams(settings));
    return builder -> builder.filter(filter);
  }
}
