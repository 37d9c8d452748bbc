package io.bulkhead.insight;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.Ticker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/*
 * Concurrency
 * -----------
 * Three kinds of callers share an insight: samplers (normally one scheduler thread calling sample()),
 * readers (dashboard, endpoint or log threads calling diagnosis(), advice(), snapshot()), and
 * membership changes (watch, unwatch, and a registry's listener callbacks on whatever thread changed
 * the registry).
 *
 * Algorithm: membership is a copy-on-write array of Watched entries behind a volatile field; changes
 * swap it under `membership`. sample() reads the field once and the ticker once, then for each entry
 * reads its compartment's stats once, with no lock held, and hands those same stats to both consumers:
 * the entry's SampleHistory (which takes its own lock for the arithmetic, see its comment) and its
 * sizing Track (immutable, swapped by compare-and-set; SizingAdvisor.next is pure, so a retry only
 * recomputes). A reader reads the field once and each entry's latest results: no lock, no stats read.
 *
 * Invariants: at most one entry per compartment name in the array; an entry's history and track only
 * ever hold samples of its own compartment; an entry once removed from the array is never put back.
 * `membership` guards only the swap: it is never held while stats are read or a caller's code runs.
 *
 * Interleavings:
 *   T1 sample() has read the array including entry E; T2 unwatches E's compartment. T1 still records
 *      into E's history and track; E is unreachable from the new array, so nobody sees either. Removal
 *      forgets the diagnosis and the advice in one step, and a late sample cannot bring them back.
 *   T1 sample() has read the array; T2 watches D. D is not sampled this round; its first Diagnosis
 *      ("not sampled yet") is there from the moment it is watched, its advice from its first sample.
 *   T1 and T2 both sample, T1 with the earlier ticker reading but recording last. The history drops
 *      T1's sample (SampleHistory's comment); the track's update keeps a track whose last sample is
 *      not older than T1's, so advice too only moves forward in ticker order.
 *   T1 removes compartment "x" from a registry and T2 registers a new "x": the registry calls
 *      onRemoved(old) and onAdded(new) outside its lock, so they may arrive in either order. Entries
 *      are removed by identity: onAdded(new) replaces the entry of the same name, and a late
 *      onRemoved(old) finds that the entry under "x" belongs to another compartment and leaves it.
 *   T1 registers "x" and T2 removes it at once: onRemoved(x) may arrive before onAdded(x) and find
 *      nothing. onAdded(x) checks under `membership` that the registry still holds x; if T2's removal
 *      came after that check, its onRemoved is still to come and removes the entry. Lock order is ours
 *      then the registry's; the registry never calls a listener while holding its own.
 */

/**
 * Watches compartments and keeps, for each, a {@link Diagnosis} (is it healthy, saturated, limited
 * too tightly, or waiting on a dependency that slows down?) and a {@link SizingAdvice} (what limit
 * does its traffic need?), both from one sample history: each {@link #sample()} reads every watched
 * compartment's {@link Compartment#stats()} once and feeds both.
 *
 * <pre>{@code
 * Insight insight = Insight.create();
 * insight.watch(registry);                                        // follows adds and removes
 * scheduler.scheduleAtFixedRate(insight::sample, 1, 1, SECONDS);  // you own the schedule
 * Diagnosis d = insight.diagnosis("llm").orElseThrow();           // cheap: the last verdict
 * String json = insight.snapshot().toJson();                      // what a /bulkheads endpoint serves
 * }</pre>
 *
 * <p>The thresholds of the diagnosis come from a {@link Diagnostician}, the headrooms of the advice
 * from a {@link SizingAdvisor}; {@link #builder()} takes both. Call {@link #sample()} about once a
 * second: the diagnosis needs at least three samples per short window, and the advice measures its
 * rates between samples at least {@linkplain SizingAdvisor.Builder#interval an interval} apart.
 *
 * <p>A compartment removed from a watched registry, or {@linkplain #unwatch unwatched}, is
 * forgotten by both at once; one registered again under the same name starts afresh.
 *
 * <p>This class is thread-safe. Reading a diagnosis, an advice or the list of them is lock-free and
 * costs no stats read, so a dashboard may ask as often as it likes; a {@link #snapshot()} reads
 * each compartment's stats once more, for numbers as fresh as the request.
 */
public final class Insight {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.insight");

  private final Diagnostician diagnostician;
  private final SizingAdvisor advisor;
  private final Ticker ticker;

  private final ReentrantLock membership = new ReentrantLock();
  private volatile Watched[] watched = new Watched[0];

  private Insight(Builder b) {
    this.diagnostician = b.diagnostician;
    this.advisor = b.advisor;
    this.ticker = b.ticker;
  }

  /**
   * Returns an insight with the default diagnosis thresholds, sizing headrooms and system ticker.
   */
  public static Insight create() {
    return builder().build();
  }

  /** Starts building an insight with other thresholds, headrooms or a fake ticker. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts watching {@code compartment}. One already watched is left as it is; one with the same
   * name but a different identity replaces it, and its history starts afresh.
   */
  public void watch(Compartment compartment) {
    Objects.requireNonNull(compartment, "compartment");
    add(compartment, null);
  }

  /**
   * Watches every compartment of {@code registry}, now and as they are added, and forgets each (its
   * diagnosis and its advice) when it is removed.
   */
  public void watch(BulkheadRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    registry.addListener(
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment compartment) {
            add(compartment, registry);
          }

          @Override
          public void onRemoved(Compartment compartment) {
            unwatch(compartment);
          }
        });
  }

  private void add(Compartment compartment, BulkheadRegistry source) {
    membership.lock();
    try {
      if (source != null && source.find(compartment.name()).orElse(null) != compartment) {
        return; // removed again before we heard it was added: see the last interleaving above
      }
      Watched[] current = watched;
      for (int i = 0; i < current.length; i++) {
        if (current[i].compartment == compartment) {
          return;
        }
        if (current[i].compartment.name().equals(compartment.name())) {
          Watched[] next = current.clone();
          next[i] =
              new Watched(compartment, diagnostician.history(compartment.name(), ticker.read()));
          watched = next;
          return;
        }
      }
      Watched[] next = Arrays.copyOf(current, current.length + 1);
      next[current.length] =
          new Watched(compartment, diagnostician.history(compartment.name(), ticker.read()));
      watched = next;
    } finally {
      membership.unlock();
    }
  }

  /**
   * Stops watching {@code compartment} and forgets what was seen of it; returns whether it was
   * watched.
   */
  public boolean unwatch(Compartment compartment) {
    Objects.requireNonNull(compartment, "compartment");
    membership.lock();
    try {
      Watched[] current = watched;
      for (int i = 0; i < current.length; i++) {
        if (current[i].compartment == compartment) {
          Watched[] next = new Watched[current.length - 1];
          System.arraycopy(current, 0, next, 0, i);
          System.arraycopy(current, i + 1, next, i, current.length - i - 1);
          watched = next;
          return true;
        }
      }
      return false;
    } finally {
      membership.unlock();
    }
  }

  /**
   * Reads the stats of every watched compartment once and updates its diagnosis and its advice.
   * Meant to be called by one scheduler thread about once a second; concurrent calls are safe (a
   * sample older than the newest one a compartment has is dropped). A compartment whose {@code
   * stats()} throws is skipped this round and logged, so one faulty compartment neither stops the
   * others nor ends a {@code scheduleAtFixedRate} schedule.
   */
  public void sample() {
    Watched[] current = watched;
    long now = ticker.read();
    for (Watched w : current) {
      BulkheadStats stats;
      try {
        stats = w.compartment.stats();
      } catch (RuntimeException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "compartment '" + w.compartment.name() + "' threw from stats(); not sampled",
            e);
        continue;
      }
      w.history.record(now, stats);
      w.sizing.updateAndGet(
          t -> t != null && now - t.sampledAt <= 0 ? t : advisor.next(t, now, stats));
    }
  }

  /** The latest diagnosis of the compartment named {@code name}, if it is watched. Lock-free. */
  public Optional<Diagnosis> diagnosis(String name) {
    Objects.requireNonNull(name, "name");
    Watched w = find(watched, name);
    return w == null ? Optional.empty() : Optional.of(w.history.latest());
  }

  /** The latest diagnosis of every watched compartment, in the order they were first watched. */
  public List<Diagnosis> diagnoses() {
    Watched[] current = watched;
    List<Diagnosis> all = new ArrayList<>(current.length);
    for (Watched w : current) {
      all.add(w.history.latest());
    }
    return Collections.unmodifiableList(all);
  }

  /**
   * The latest advice on the compartment named {@code name}: empty if it is not watched or has not
   * been sampled since it was. Lock-free.
   */
  public Optional<SizingAdvice> advice(String name) {
    Objects.requireNonNull(name, "name");
    Watched w = find(watched, name);
    return w == null ? Optional.empty() : Optional.ofNullable(w.advice());
  }

  /**
   * The latest advice on every watched compartment sampled so far, in the order they were watched.
   */
  public List<SizingAdvice> advice() {
    Watched[] current = watched;
    List<SizingAdvice> all = new ArrayList<>(current.length);
    for (Watched w : current) {
      SizingAdvice a = w.advice();
      if (a != null) {
        all.add(a);
      }
    }
    return Collections.unmodifiableList(all);
  }

  /** A snapshot of every watched compartment, with no resources behind them. */
  public Snapshot snapshot() {
    return snapshot(ResourceView.none());
  }

  /**
   * A snapshot of every watched compartment, in the order they were watched: its settings and stats
   * read now, its latest diagnosis and advice, and what {@code resources} knows of the resource
   * behind it. {@code resources} is called on this thread, once per compartment.
   */
  public Snapshot snapshot(ResourceView resources) {
    Objects.requireNonNull(resources, "resources");
    Watched[] current = watched;
    List<Snapshot.Row> rows = new ArrayList<>(current.length);
    for (Watched w : current) {
      Compartment c = w.compartment;
      rows.add(
          new Snapshot.Row(
              c.name(),
              c.config(),
              c.stats(),
              w.history.latest(),
              w.advice(),
              resources.of(c).orElse(null),
              c.adaptive().orElse(null)));
    }
    return new Snapshot(rows);
  }

  private static Watched find(Watched[] current, String name) {
    for (Watched w : current) {
      if (w.compartment.name().equals(name)) {
        return w;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return "Insight" + diagnoses();
  }

  /** One watched compartment: what the diagnosis and the advice have kept of it. */
  private static final class Watched {
    final Compartment compartment;
    final SampleHistory history;
    final AtomicReference<SizingAdvisor.Track> sizing =
        new AtomicReference<>(); // null: not sampled

    Watched(Compartment compartment, SampleHistory history) {
      this.compartment = compartment;
      this.history = history;
    }

    SizingAdvice advice() {
      SizingAdvisor.Track t = sizing.get();
      return t == null ? null : t.advice;
    }
  }

  /**
   * Builds an {@link Insight}. Obtain one from {@link Insight#builder()}. This class is
   * <em>not</em> thread-safe.
   */
  public static final class Builder {

    private Diagnostician diagnostician = Diagnostician.create();
    private SizingAdvisor advisor = SizingAdvisor.create();
    private Ticker ticker = Ticker.system();

    private Builder() {}

    /** Sets the thresholds of the diagnosis; the default is {@link Diagnostician#create()}. */
    public Builder diagnostician(Diagnostician diagnostician) {
      this.diagnostician = Objects.requireNonNull(diagnostician, "diagnostician");
      return this;
    }

    /**
     * Sets the headrooms and interval of the sizing advice; the default is {@link
     * SizingAdvisor#create()}.
     */
    public Builder advisor(SizingAdvisor advisor) {
      this.advisor = Objects.requireNonNull(advisor, "advisor");
      return this;
    }

    /** Replaces the source of time, for tests; the default is {@link Ticker#system()}. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** Returns a new insight, watching nothing yet. */
    public Insight build() {
      return new Insight(this);
    }
  }
}
