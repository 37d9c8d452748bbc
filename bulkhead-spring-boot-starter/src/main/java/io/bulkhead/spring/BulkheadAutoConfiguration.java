package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.Compartments;
import io.bulkhead.insight.Insight;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * The compartments of {@code bulkhead.*} as a {@link BulkheadRegistry} bean, the {@link
 * Bulkhead @Bulkhead} annotation, and an {@link Insight} sampled once a second.
 *
 * <p>Nothing here calls an upstream: a service starts whether or not its dependencies are up. Every
 * setting is checked when the registry is built, and the first wrong one stops start-up with its
 * key and value ({@link BulkheadFailureAnalyzer}). A registry bean of the application's own
 * replaces this one (and then {@code bulkhead.*} is not read).
 */
@AutoConfiguration
@EnableConfigurationProperties(BulkheadProperties.class)
public class BulkheadAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadAutoConfiguration() {}

  /**
   * The {@code bulkhead.*} settings read into the settings file's model, checked; fails start-up on
   * a wrong setting. (The properties bean is bound first, so a key that is not a setting is refused
   * by Spring's binder, as for any other properties.)
   */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadFile bulkheadSettings(Environment environment, BulkheadProperties properties) {
    return CompartmentFactory.settings(Binder.get(environment));
  }

  /**
   * The budgets, compartments and worker pools of the settings, built; the worker pools shut down
   * with the context. Not made when the application has its own registry.
   */
  @Bean
  @ConditionalOnMissingBean({Compartments.class, BulkheadRegistry.class})
  public Compartments bulkheadCompartments(BulkheadFile settings) {
    return CompartmentFactory.build(settings);
  }

  /** Every configured compartment, budgets enforced. */
  @Bean
  @ConditionalOnMissingBean
  public BulkheadRegistry compartmentRegistry(Compartments compartments) {
    return compartments.registry();
  }

  /** Diagnosis and sizing advice for every compartment of the registry. */
  @Bean
  @ConditionalOnMissingBean
  public Insight compartmentInsight(BulkheadRegistry registry) {
    Insight insight = Insight.create();
    insight.watch(registry);
    return insight;
  }

  /** Samples the insight once a second on a daemon thread while the context runs. */
  @Bean
  InsightSampler compartmentInsightSampler(Insight insight) {
    return new InsightSampler(insight);
  }

  /** Applies {@link Bulkhead @Bulkhead}: Spring AOP, without AspectJ. */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  @ConditionalOnClass(
      name =
          "org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor")
  static BulkheadAnnotationPostProcessor compartmentAnnotationPostProcessor() {
    return new BulkheadAnnotationPostProcessor();
  }
}
