package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.micrometer.BulkheadMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Micrometer: the {@code bulkhead.*} meters of every compartment ({@link BulkheadMetrics}), bound
 * to each {@link MeterRegistry} when the application has one.
 *
 * <p>The two timers publish no percentile histogram unless it is asked for, as everywhere in Spring
 * Boot: {@code management.metrics.distribution.percentiles-histogram.bulkhead=true} (or {@code
 * ...bulkhead.call.duration} for one of them). Without Spring, {@code bulkhead-micrometer} keeps
 * its own default (histograms on).
 */
@AutoConfiguration(
    after = BulkheadAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass({MeterRegistry.class, BulkheadMetrics.class})
@ConditionalOnBean({MeterRegistry.class, BulkheadRegistry.class})
public class BulkheadMetricsAutoConfiguration {

  private static final String METER_PREFIX = "bulkhead.";

  /** Created by Spring Boot. */
  public BulkheadMetricsAutoConfiguration() {}

  /** The meters of every compartment, now and as compartments are added; removed on shutdown. */
  @Bean
  public BulkheadMetrics compartmentMetrics(BulkheadRegistry registry) {
    return BulkheadMetrics.of(registry);
  }

  /**
   * Turns the timers' histograms off before Spring Boot's own filter (order 0) applies {@code
   * management.metrics.distribution.*}, so that those properties, and any filter ordered after this
   * one, decide.
   */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  public MeterFilter compartmentHistogramsOffByDefault() {
    return new MeterFilter() {
      @Override
      public @Nullable DistributionStatisticConfig configure(
          Meter.Id id, DistributionStatisticConfig config) {
        if (!id.getName().startsWith(METER_PREFIX)) {
          return config;
        }
        return DistributionStatisticConfig.builder()
            .percentilesHistogram(false)
            .build()
            .merge(config);
      }
    };
  }
}
