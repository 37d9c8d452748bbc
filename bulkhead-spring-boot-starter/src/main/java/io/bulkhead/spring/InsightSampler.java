package io.bulkhead.spring;

import io.bulkhead.insight.Insight;
import io.bulkhead.internal.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/*
 * Concurrency: start() and stop() are called by the context's lifecycle, one at a time; `executor`
 * is volatile only so that isRunning() from another thread sees the latest. The sampling thread calls
 * Insight.sample(), which is safe alongside the endpoint's snapshot() (Insight's own comment).
 */

/**
 * Samples the {@link Insight} once a second, on one daemon thread, from the moment the context has
 * started until it closes; what the diagnosis and the sizing advice of the {@code compartments}
 * endpoint are made of. It reads the compartments' stats only: it never calls an upstream.
 */
final class InsightSampler implements SmartLifecycle {

  /** How often the insight is sampled: the diagnosis needs about one sample a second. */
  static final Duration PERIOD = Duration.ofSeconds(1);

  private final Insight insight;
  private volatile @Nullable ScheduledExecutorService executor;

  InsightSampler(Insight insight) {
    this.insight = insight;
  }

  @Override
  public void start() {
    ScheduledExecutorService sampler =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("bulkhead-insight"));
    long period = PERIOD.toMillis();
    sampler.scheduleAtFixedRate(insight::sample, period, period, TimeUnit.MILLISECONDS);
    executor = sampler;
  }

  @Override
  public void stop() {
    ScheduledExecutorService sampler = executor;
    if (sampler != null) {
      sampler.shutdownNow();
      executor = null;
    }
  }

  @Override
  public boolean isRunning() {
    return executor != null;
  }
}
