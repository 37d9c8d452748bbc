package io.bulkhead.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Spring MVC: a {@link io.bulkhead.BulkheadFullException} in a request becomes {@code 503} with
 * {@code Retry-After} and a problem body ({@link BulkheadProblemHandler}).
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
public class BulkheadWebMvcAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadWebMvcAutoConfiguration() {}

  /** The {@code 503} answer; an application's own bean of this type replaces it. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadProblemHandler bulkheadProblemHandler() {
    return new BulkheadProblemHandler();
  }
}
