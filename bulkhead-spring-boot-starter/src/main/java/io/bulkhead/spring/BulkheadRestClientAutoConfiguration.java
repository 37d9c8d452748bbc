package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * Outbound: every {@code RestClient.Builder} Spring Boot builds routes the calls to a configured
 * {@code bulkhead.compartments.<name>.upstream} into that compartment ({@link
 * BulkheadClientHttpRequestInterceptor}).
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass({RestClient.class, RestClientCustomizer.class})
public class BulkheadRestClientAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadRestClientAutoConfiguration() {}

  /** Adds the routing interceptor to every auto-configured {@code RestClient.Builder}. */
  @Bean
  public RestClientCustomizer compartmentRestClientCustomizer(
      BulkheadRegistry registry, BulkheadFile settings) {
    BulkheadClientHttpRequestInterceptor interceptor =
        BulkheadClientHttpRequestInterceptor.routing(
            registry, CompartmentFactory.upstreams(settings));
    return builder -> builder.requestInterceptor(interceptor);
  }
}
