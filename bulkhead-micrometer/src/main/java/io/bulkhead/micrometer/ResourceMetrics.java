package io.bulkhead.micrometer;

import io.bulkhead.Compartment;
import io.bulkhead.insight.ResourceView;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/*
 * One reading of the view per scrape
 * ----------------------------------
 * Some views change state when read: WorkerProcess.stats() measures the CPUs used "since the previous
 * read", so six gauges each calling the view would give the first a whole scrape interval and the
 * other five a few microseconds. The gauges therefore share readings: `reading` holds the last
 * Optional<Resource> the view returned and the set of figures already served from it. A gauge whose
 * figure was not yet served from the current reading takes its value from it; a gauge whose figure
 * was (the next scrape has begun) asks the view again and installs the new reading. One scrape
 * that reads every gauge once thus calls the view once, whatever order the registry reads them in.
 *
 * Invariant: a Reading is immutable; `reading` only ever moves to a reading with one more figure
 * served (compareAndSet) or to a fresh one. The view is called with no lock held (there is none).
 *
 *   T1 and T2 (two registries scraping at once) both find their figure served: both call the view
 *      and both set a fresh reading; the last set wins. Each value returned still comes from one real
 *      reading; the view was merely read twice, as it would be by two scrapers anyway.
 *   T1 marks figure a on reading R while T2 replaces R by a fresh reading F: T1's compareAndSet fails
 *      and it retries against F.
 */

/**
 * Gauges for the resource a {@link ResourceView} knows behind a compartment: a connection pool, a
 * worker process, anything whose figures the compartment's card shows.
 *
 * <pre>{@code
 * ResourceMetrics.bind(meterRegistry, front, reports.resources());   // a WorkerProcess's figures
 * }</pre>
 *
 * <p>{@link #bind} asks the view once for the compartment's resource to learn its kind and figure
 * names, and registers one gauge per figure, named {@value #PREFIX} followed by the figure's name
 * in dotted lower case ({@code cpuUsedMilli} becomes {@code bulkhead.resource.cpu.used.milli},
 * Prometheus {@code bulkhead_resource_cpu_used_milli}), tagged {@value BulkheadMetrics#NAME_TAG}
 * (the compartment's name, as on {@link BulkheadMetrics}'s meters) and {@value #KIND_TAG} (the
 * resource's kind, {@code process} or {@code pool}). A binary size unit at the end of a word stays
 * one word: {@code memoryUsedMiB} becomes {@code memory.used.mib}.
 *
 * <p><b>Why one name per figure</b> rather than one name with a {@code figure} tag: Micrometer and
 * Prometheus expect every series of one meter to measure the same thing in the same unit, so that a
 * sum or an average over its tags means something. CPU thousandths, MiB and restart counts summed
 * mean nothing; each gets its own name, and the tags only tell which compartment and which kind.
 *
 * <p>The gauges read the view when the registry polls them, not at bind time. The view is asked
 * once per scrape, not once per gauge (its figures come from one moment, and a view that measures
 * "since the previous read" sees the whole interval). A figure the view no longer returns, a view
 * that returns nothing for the compartment, or a resource of another kind than at bind time, reads
 * {@code NaN} until it comes back. The view is called on the scraping thread, never under a lock of
 * this class, and must be thread-safe and quick, as {@link ResourceView} says.
 *
 * <p>Binding the same compartment and view kind twice to one registry shares the first binding's
 * gauges (Micrometer keys a meter by name and tags); {@link #close()} on either removes them.
 */
public final class ResourceMetrics implements AutoCloseable {

  /** The prefix of every gauge name; the figure's name, dotted, follows. */
  public static final String PREFIX = "bulkhead.resource.";

  /** The tag carrying the resource's kind, as {@link ResourceView.Resource#kind()} says it. */
  public static final String KIND_TAG = "kind";

  private final MeterRegistry registry;
  private final List<Meter> meters;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ResourceMetrics(MeterRegistry registry, List<Meter> meters) {
    this.registry = registry;
    this.meters = meters;
  }

  /**
   * Registers in {@code registry} one gauge per figure of the resource {@code view} knows behind
   * {@code compartment}, read from the view at every scrape.
   *
   * @return the binding, whose {@link #close()} removes the gauges
   * @throws NullPointerException naming the parameter, when one is null
   * @throws IllegalArgumentException when the view knows no resource behind the compartment now, or
   *     when a figure's name has no letter or digit, or two figures would get the same gauge name
   */
  public static ResourceMetrics bind(
      MeterRegistry registry, Compartment compartment, ResourceView view) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(compartment, "compartment");
    Objects.requireNonNull(view, "view");
    Optional<ResourceView.Resource> found = view.of(compartment);
    if (found == null || found.isEmpty()) {
      throw new IllegalArgumentException(
          "the view knows no resource behind compartment '"
              + compartment.name()
              + "'; bind it to the compartment its resource is behind");
    }
    ResourceView.Resource resource = found.get();
    List<String> figures = List.copyOf(resource.figures().keySet());
    Map<String, String> figureByMeter = new HashMap<>();
    for (String figure : figures) {
      String meter = meterName(figure);
      String earlier = figureByMeter.putIfAbsent(meter, figure);
      if (earlier != null) {
        throw new IllegalArgumentException(
            "figures '"
                + earlier
                + "' and '"
                + figure
                + "' of compartment '"
                + compartment.name()
                + "' would both be gauge "
                + meter);
      }
    }
    Readings readings = new Readings(view, compartment, resource.kind());
    Tags tags = Tags.of(BulkheadMetrics.NAME_TAG, compartment.name(), KIND_TAG, resource.kind());
    List<Meter> meters = new ArrayList<>(figures.size());
    for (int i = 0; i < figures.size(); i++) {
      String figure = figures.get(i);
      int index = i;
      meters.add(
          Gauge.builder(meterName(figure), readings, r -> r.value(index, figure))
              .description(
                  "Figure " + figure + " of the " + resource.kind() + " behind the compartment")
              .tags(tags)
              .strongReference(true)
              .register(registry));
    }
    return new ResourceMetrics(registry, List.copyOf(meters));
  }

  /**
   * The gauge name of a figure: {@value #PREFIX} and the figure's words in lower case joined by
   * dots. A word starts at a capital that follows a lower-case letter or a digit, or at a capital
   * followed by a lower-case letter after other capitals ({@code HTTPCode}: {@code http.code}); any
   * other character than a letter or digit separates words. {@code KiB}, {@code MiB}, {@code GiB},
   * {@code TiB} stay one word.
   *
   * @throws IllegalArgumentException when the figure has no letter or digit
   */
  static String meterName(String figure) {
    String units = figure.replaceAll("([KMGT])iB(?![a-z])", "$1ib");
    StringBuilder dotted = new StringBuilder();
    for (int i = 0; i < units.length(); i++) {
      char c = units.charAt(i);
      if (!Character.isLetterOrDigit(c)) {
        separate(dotted);
        continue;
      }
      if (Character.isUpperCase(c) && i > 0) {
        char before = units.charAt(i - 1);
        boolean afterLower = Character.isLowerCase(before) || Character.isDigit(before);
        boolean endsCapitals =
            Character.isUpperCase(before)
                && i + 1 < units.length()
                && Character.isLowerCase(units.charAt(i + 1));
        if (afterLower || endsCapitals) {
          separate(dotted);
        }
      }
      dotted.append(Character.toLowerCase(c));
    }
    int end = dotted.length();
    if (end > 0 && dotted.charAt(end - 1) == '.') {
      dotted.setLength(end - 1);
    }
    if (dotted.isEmpty()) {
      throw new IllegalArgumentException(
          "figure name '" + figure + "' has no letter or digit to name a gauge after");
    }
    return PREFIX + dotted.toString().toLowerCase(Locale.ROOT);
  }

  private static void separate(StringBuilder dotted) {
    if (!dotted.isEmpty() && dotted.charAt(dotted.length() - 1) != '.') {
      dotted.append('.');
    }
  }

  /** Removes the gauges from the registry. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      for (Meter m : meters) {
        registry.remove(m);
      }
    }
  }

  @Override
  public String toString() {
    return "ResourceMetrics{" + meters.size() + " gauges" + (closed.get() ? ", closed" : "") + "}";
  }

  /** The readings the gauges of one binding share; see the comment at the top. */
  private static final class Readings {
    private final ResourceView view;
    private final Compartment compartment;
    private final String kind;
    private final AtomicReference<@Nullable Reading> reading = new AtomicReference<>();

    Readings(ResourceView view, Compartment compartment, String kind) {
      this.view = view;
      this.compartment = compartment;
      this.kind = kind;
    }

    double value(int index, String figure) {
      while (true) {
        Reading current = reading.get();
        if (current == null || current.served.get(index)) {
          Reading fresh = new Reading(view.of(compartment), index);
          reading.set(fresh);
          return fresh.figure(kind, figure);
        }
        if (reading.compareAndSet(current, current.serving(index))) {
          return current.figure(kind, figure);
        }
      }
    }
  }

  /** What the view returned once, and which figures were already served from it. */
  private static final class Reading {
    private final @Nullable Optional<ResourceView.Resource> resource;
    private final BitSet served;

    Reading(@Nullable Optional<ResourceView.Resource> resource, int servedFirst) {
      this(resource, new BitSet());
      served.set(servedFirst);
    }

    private Reading(@Nullable Optional<ResourceView.Resource> resource, BitSet served) {
      this.resource = resource;
      this.served = served;
    }

    Reading serving(int index) {
      BitSet more = (BitSet) served.clone();
      more.set(index);
      return new Reading(resource, more);
    }

    double figure(String kind, String figure) {
      if (resource == null || resource.isEmpty() || !resource.get().kind().equals(kind)) {
        return Double.NaN;
      }
      Long value = resource.get().figures().get(figure);
      return value == null ? Double.NaN : value;
    }
  }
}
