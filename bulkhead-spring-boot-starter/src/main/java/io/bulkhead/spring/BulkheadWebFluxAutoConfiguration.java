package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.reactor.BulkheadOperator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.server.WebFilter;

/**
 * Spring WebFlux: a {@link io.bulkhead.BulkheadFullException} in an annotated controller's handling
 * (thrown, or signalled by a returned {@code CompletionStage}) becomes {@code 503} with {@code
 * Retry-After} and a problem body, through the same {@link BulkheadProblemHandler} as in MVC; with
 * {@code bulkhead-reactor} on the class path, the requests of every compartment's {@code paths}
 * enter it at the edge, through a {@code WebFilter} bean named {@value #FILTER_NAME}.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
public class BulkheadWebFluxAutoConfiguration {

  /** The name of the {@code WebFilter} bean that enforces {@code paths}. */
  public static final String FILTER_NAME = "bulkheadWebFilter";

  private static final Log LOG = LogFactory.getLog(BulkheadWebFluxAutoConfiguration.class);

  /** Created by Spring Boot. */
  public BulkheadWebFluxAutoConfiguration() {}

  /** The {@code 503} answer; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadProblemHandler bulkheadProblemHandler() {
    return new BulkheadProblemHandler();
  }

  /** The {@code WebFilter} that enforces {@code paths}, when {@code bulkhead-reactor} is there. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(BulkheadOperator.class)
  static class EdgeFilter {

    /**
     * The filter with the {@code paths} of every compartment ({@link EdgeRoutes}; it lets every
     * request through when no compartment has any); a bean of this name of the application's own
     * replaces it.
     */
    @Bean(FILTER_NAME)
    @ConditionalOnMissingBean(name = FILTER_NAME)
    WebFilter bulkheadWebFilter(
        BulkheadRegistry registry, BulkheadProperties properties, ApplicationContext context) {
      return new BulkheadWebFilter(
          EdgeRoutes.of(
              properties,
              registry,
              ManagementPaths.of(context, ""),
              properties.getEdge().isIncludeManagement()));
    }
  }

  /** Without {@code bulkhead-reactor}, {@code paths} would be ignored: say so at start-up. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass("io.bulkhead.reactor.BulkheadOperator")
  static class NoEdgeFilter {
    NoEdgeFilter(BulkheadProperties properties) {
      for (EdgePath path : EdgePath.all(properties)) {
        LOG.warn(
            "bulkhead.compartments."
                + path.compartment()
                + ".paths "
                + path.pattern()
                + " is not enforced: add io.github.bulkhead:bulkhead-reactor, whose WebFilter routes requests"
                + " into compartments in Spring WebFlux");
      }
    }
  }
}
