package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.server.WebFilter;

/**
 * Spring WebFlux: a {@link io.bulkhead.BulkheadFullException} in an annotated controller's handling
 * (thrown, or signalled by a returned {@code CompletionStage}) becomes {@code 503} with {@code
 * Retry-After} and a problem body, through the same {@link BulkheadProblemHandler} as in MVC, and
 * the requests of every compartment's {@code paths} enter it at the edge, through a {@code
 * WebFilter} bean named {@value #FILTER_NAME} (on {@code bulkhead-reactor}'s operator).
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
public class BulkheadWebFluxAutoConfiguration {

  /** The name of the {@code WebFilter} bean that enforces {@code paths}. */
  public static final String FILTER_NAME = "compartmentWebFilter";

  /** Created by Spring Boot. */
  public BulkheadWebFluxAutoConfiguration() {}

  /** The {@code 503} answer; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadProblemHandler compartmentProblemHandler() {
    return new BulkheadProblemHandler();
  }

  /** The {@code WebFilter} that enforces {@code paths}. */
  @Configuration(proxyBeanMethods = false)
  static class EdgeFilter {

    /**
     * The filter with the {@code paths} of every compartment ({@link EdgeRoutes}; it lets every
     * request through when no compartment has any); a bean of this name of the application's own
     * replaces it.
     */
    @Bean(FILTER_NAME)
    @ConditionalOnMissingBean(name = FILTER_NAME)
    WebFilter bulkheadWebFilter(
        BulkheadRegistry registry,
        BulkheadFile settings,
        BulkheadProperties properties,
        ApplicationContext context) {
      return new BulkheadWebFilter(
          EdgeRoutes.of(
              settings,
              registry,
              ManagementPaths.of(context, ""),
              properties.getEdge().isIncludeManagement()));
    }
  }
}
