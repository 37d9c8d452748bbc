package io.bulkhead.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * Spring WebFlux: a {@link io.bulkhead.BulkheadFullException} in an annotated controller's handling
 * (thrown, or signalled by a returned {@code CompletionStage}) becomes {@code 503} with
 * {@code Retry-After} and a problem body, through the same {@link BulkheadProblemHandler} as in MVC.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
public class BulkheadWebFluxAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadWebFluxAutoConfiguration() {}

  /** The {@code 503} answer; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadProblemHandler bulkheadProblemHandler() {
    return new BulkheadProblemHandler();
  }
}
