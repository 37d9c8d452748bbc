package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.micrometer.BulkheadTracing;
import io.micrometer.tracing.Tracer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer Tracing: a {@code bulkhead.wait} span, child of the request's span, for every call
 * that waited for a slot on its own thread or was refused ({@link BulkheadTracing}), in every
 * compartment of the registry, when the application has a {@link Tracer} (Spring Boot makes one
 * with {@code micrometer-tracing-bridge-otel} or {@code -brave} on the class path). Without a
 * tracer nothing is attached, and the compartments pay nothing.
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass({Tracer.class, BulkheadTracing.class})
@ConditionalOnBean(BulkheadRegistry.class)
public class BulkheadTracingAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadTracingAutoConfiguration() {}

  /**
   * The wait spans, attached to every compartment now and as compartments are added, detached on
   * shutdown; nothing when there is no tracer (or only the no-op one).
   */
  @Bean
  public BulkheadTracing.Attachment compartmentTracing(
      ObjectProvider<Tracer> tracer, BulkheadRegistry registry) {
    Tracer t = tracer.getIfUnique();
    if (t == null || t == Tracer.NOOP) {
      return () -> {};
    }
    return BulkheadTracing.of(t).attachTo(registry);
  }
}
