package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.servlet.BulkheadFilter;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Spring MVC: a {@link io.bulkhead.BulkheadFullException} in a request becomes {@code 503} with
 * {@code Retry-After} and a problem body ({@link BulkheadProblemHandler}), and the requests of
 * every compartment's {@code paths} enter it at the edge, through {@code bulkhead-servlet}'s {@link
 * BulkheadFilter} registered as {@value #FILTER_NAME}.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
public class BulkheadWebMvcAutoConfiguration {

  /** The name of the filter's registration. */
  public static final String FILTER_NAME = "compartmentFilter";

  /**
   * The filter's place in the chain: just after Spring Security's ({@code -100}), so a request that
   * is not allowed in never takes a slot, and before the application's own filters, so a refused
   * request costs them nothing. The filters before it (Spring Boot's, Security's) support async,
   * which a request that waits for a slot needs.
   */
  public static final int FILTER_ORDER = -90;

  /** Created by Spring Boot. */
  public BulkheadWebMvcAutoConfiguration() {}

  /** The {@code 503} answer; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadProblemHandler compartmentProblemHandler() {
    return new BulkheadProblemHandler();
  }

  /** The servlet filter that enforces {@code paths}. */
  @Configuration(proxyBeanMethods = false)
  static class EdgeFilter {

    /**
     * The filter with the {@code paths} of every compartment ({@link EdgeRoutes}), mapped to every
     * request for the {@code REQUEST} and {@code ASYNC} dispatches; disabled when no compartment
     * has {@code paths}. A registration bean of this name of the application's own replaces it.
     */
    @Bean(FILTER_NAME)
    @ConditionalOnMissingBean(name = FILTER_NAME)
    FilterRegistrationBean<BulkheadFilter> bulkheadFilter(
        BulkheadRegistry registry,
        BulkheadFile settings,
        BulkheadProperties properties,
        ApplicationContext context) {
      String servletPath = context.getEnvironment().getProperty("spring.mvc.servlet.path", "/");
      String prefix =
          servletPath.endsWith("/")
              ? servletPath.substring(0, servletPath.length() - 1)
              : servletPath;
      EdgeRoutes routes =
          EdgeRoutes.of(
              settings,
              registry,
              ManagementPaths.of(context, prefix),
              properties.getEdge().isIncludeManagement());
      FilterRegistrationBean<BulkheadFilter> registration =
          new FilterRegistrationBean<>(BulkheadFilter.of(routes, RejectionBody.problemJson()));
      registration.setName(FILTER_NAME);
      registration.setAsyncSupported(true);
      registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
      registration.addUrlPatterns("/*");
      registration.setOrder(FILTER_ORDER);
      registration.setEnabled(!routes.isEmpty());
      return registration;
    }
  }
}
