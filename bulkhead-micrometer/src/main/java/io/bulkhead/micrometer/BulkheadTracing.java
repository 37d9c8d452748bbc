package io.bulkhead.micrometer;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/*
 * How a wait is followed
 * ----------------------
 * A listener sees a compartment's events, not which call each belongs to. A caller that waits on its
 * own thread (call, acquire: the thread parks) has its onQueued and then the end of its wait on that
 * thread, with no event of that thread in between; so onQueued notes the caller's trace context and
 * the time in a thread-local, and the next event on the same thread closes it, if it ends a wait of
 * the same compartment (admitted after waiting, refused after waiting, withdrawn). The span is made
 * then, whole, with the start noted and the end now: nothing is left open if the call never ends.
 *
 * A call queued by submit() returns to its caller at once and ends its wait on one of the
 * compartment's threads, where the caller's context is not: its note stays until the next queueing
 * or end of a wait on the caller's thread replaces or drops it, and it gets no span. An admission
 * at once and a release touch nothing, so the path every call takes costs a listener call. Races:
 *
 *   T1 submit() queues X (note for X on T1), returns, and T1 then calls acquire() on the same
 *      compartment and is refused at once (QUEUE_FULL). QUEUE_FULL never ends a wait (a full queue
 *      refuses before queueing), so the note is dropped and the refusal is a span of its own.
 *   T1, one of the compartment's own threads, queues X by submit() from a call it runs, and then runs
 *      the grant or timeout of another waiter Y of the same compartment: Y's end is taken for X's, a
 *      span with X's parent and a wrong length. Only a call that submits into its own compartment can
 *      do this; it is left as it is rather than paid for on every wait.
 */

/**
 * Queue time in traces, with Micrometer Tracing (Spring Boot's tracing, over OpenTelemetry or
 * Brave): a span {@value #SPAN} for every call that waited for a slot on its own thread, child of
 * the caller's current span, from the moment it queued to the moment it was admitted, refused or
 * withdrawn; and a span of no length for every call refused at once. Tags: {@value #NAME_TAG} (the
 * compartment), {@value #OUTCOME_TAG} ({@code admitted}, {@code rejected}, {@code withdrawn}),
 * {@value #REASON_TAG} when refused ({@code queue_full}, {@code wait_timeout}, {@code
 * interrupted}), and {@value #WAIT_TAG} (the wait in milliseconds).
 *
 * <pre>{@code
 * BulkheadTracing tracing = BulkheadTracing.of(tracer);
 * AutoCloseable attached = tracing.attachTo(registry);   // every compartment, now and later
 * // or Bulkhead.builder("llm").listener(tracing)...
 * }</pre>
 *
 * <p>Calls admitted at once make no span and cost a listener call that returns. A caller without a
 * current span makes no span. Waits that hold no thread ({@code submit}: the HTTP edges, Reactor,
 * {@code CompletionStage} methods) end on the compartment's own threads, away from the caller's
 * trace, and make no span either; their waits are in the {@code bulkhead.queue.wait} timer of
 * {@link BulkheadMetrics}. Attaching any listener makes a compartment time every call (two clock
 * reads), which {@link BulkheadMetrics} does already.
 *
 * <p>This class needs {@code micrometer-tracing}, an optional dependency: an application with
 * tracing has it. It is thread-safe.
 */
public final class BulkheadTracing implements BulkheadListener {

  /** The span's name. */
  public static final String SPAN = "bulkhead.wait";

  /** Tag: the compartment's name. */
  public static final String NAME_TAG = "bulkhead.name";

  /** Tag: {@code admitted}, {@code rejected} or {@code withdrawn}. */
  public static final String OUTCOME_TAG = "bulkhead.outcome";

  /** Tag, when refused: {@code queue_full}, {@code wait_timeout} or {@code interrupted}. */
  public static final String REASON_TAG = "bulkhead.reason";

  /** Tag: how long the call waited, in milliseconds ({@code 0} when refused at once). */
  public static final String WAIT_TAG = "bulkhead.wait.ms";

  private final Tracer tracer;
  private final ThreadLocal<Queued> queued = new ThreadLocal<>();

  /** A wait begun on this thread: the caller's context and when. */
  private record Queued(Compartment compartment, TraceContext parent, long epochNanos) {}

  private BulkheadTracing(Tracer tracer) {
    this.tracer = tracer;
  }

  /** What {@link #attachTo} returns: closing it takes the listener off every compartment. */
  public interface Attachment extends AutoCloseable {
    @Override
    void close();
  }

  /** A listener that makes wait spans with {@code tracer}. */
  public static BulkheadTracing of(Tracer tracer) {
    return new BulkheadTracing(Objects.requireNonNull(tracer, "tracer"));
  }

  /**
   * Adds this listener to every compartment of {@code registry}, those there now and those added
   * later, and takes it off a compartment that leaves; closing the result takes it off them all.
   */
  public Attachment attachTo(BulkheadRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    Set<Compartment> attached = ConcurrentHashMap.newKeySet();
    BulkheadRegistry.Listener follow =
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment c) {
            if (attached.add(c)) {
              c.addListener(BulkheadTracing.this);
            }
          }

          @Override
          public void onRemoved(Compartment c) {
            if (attached.remove(c)) {
              c.removeListener(BulkheadTracing.this);
            }
          }
        };
    registry.addListener(follow);
    return () -> {
      registry.removeListener(follow);
      for (Compartment c : attached) {
        follow.onRemoved(c);
      }
    };
  }

  @Override
  public void onQueued(Compartment compartment) {
    TraceContext parent = tracer.currentTraceContext().context();
    if (parent == null) {
      queued.remove();
      return;
    }
    queued.set(new Queued(compartment, parent, epochNanos()));
  }

  @Override
  public void onAdmitted(Compartment compartment, long waitedNanos) {
    if (waitedNanos == 0) {
      return; // admitted at once, the path every call takes: nothing to do
    }
    Queued q = take();
    if (q != null && q.compartment() == compartment) {
      long now = epochNanos();
      span(q.parent(), start(q, now, waitedNanos), now, compartment, "admitted", null, waitedNanos);
    }
  }

  @Override
  public void onRejected(Compartment compartment, BulkheadFullException.Reason reason) {
    Queued q = take();
    if (reason != BulkheadFullException.Reason.QUEUE_FULL
        && q != null
        && q.compartment() == compartment) {
      long now = epochNanos();
      span(q.parent(), q.epochNanos(), now, compartment, "rejected", reason, now - q.epochNanos());
      return;
    }
    TraceContext parent = tracer.currentTraceContext().context();
    if (parent != null) {
      long now = epochNanos();
      span(parent, now, now, compartment, "rejected", reason, 0);
    }
  }

  @Override
  public void onCancelled(Compartment compartment, long waitedNanos) {
    Queued q = take();
    if (q != null && q.compartment() == compartment) {
      long now = epochNanos();
      span(
          q.parent(), start(q, now, waitedNanos), now, compartment, "withdrawn", null, waitedNanos);
    }
  }

  /**
   * When the wait began: the compartment's own measure of it ({@code waitedNanos}, from before it
   * took its lock) when that reaches further back than the note taken in {@code onQueued}, which a
   * busy machine can delay; the note otherwise (a refusal at the deadline carries no measure).
   */
  private static long start(Queued q, long now, long waitedNanos) {
    return Math.min(q.epochNanos(), now - waitedNanos);
  }

  private Queued take() {
    Queued q = queued.get();
    if (q != null) {
      queued.remove();
    }
    return q;
  }

  private void span(
      TraceContext parent,
      long startEpochNanos,
      long endEpochNanos,
      Compartment compartment,
      String outcome,
      BulkheadFullException.Reason reason,
      long waitedNanos) {
    Span.Builder b =
        tracer
            .spanBuilder()
            .setParent(parent)
            .name(SPAN)
            .tag(NAME_TAG, compartment.name())
            .tag(OUTCOME_TAG, outcome)
            .tag(WAIT_TAG, String.format(Locale.ROOT, "%.3f", waitedNanos / 1e6))
            .startTimestamp(startEpochNanos, TimeUnit.NANOSECONDS);
    if (reason != null) {
      b.tag(REASON_TAG, reason.name().toLowerCase(Locale.ROOT));
    }
    b.start().end(Math.max(startEpochNanos, endEpochNanos), TimeUnit.NANOSECONDS);
  }

  private static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  @Override
  public String toString() {
    return "BulkheadTracing{" + tracer + "}";
  }
}
