package io.bulkhead.redis;

import io.bulkhead.internal.DaemonThreads;
import io.lettuce.core.RedisURI;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A capacity divided among the live instances of a service, on one Redis: this instance's share of
 * what the fleet may hold open together (database connections, sockets), kept up to date as
 * instances join and leave.
 *
 * <pre>{@code
 * FleetBudget fleet = FleetBudget.builder("orders-db").capacity(90)
 *     .minimumShare(2)                                   // two pools, one connection each at least
 *     .join("redis://127.0.0.1:6379");
 * if (fleet.awaitShare(2, Duration.ofSeconds(10)) < 2) { // the others make room for a newcomer
 *   throw new IllegalStateException("no room in " + fleet); // parked: the fleet is full
 * }
 * DatabasePools db = DatabasePools.builder("orders").jdbcUrl(url)
 *     .pool(checkout).pool(reports).total(fleet::share).open();
 * fleet.addListener((budget, before, share) -> db.resize());
 * db.resize();                                           // a change between open() and addListener
 * }</pre>
 *
 * <p><b>Shares.</b> Each instance (member) registers with a heartbeat every third of the TTL. The
 * first {@code capacity / minimumShare} members, in the order they joined, are served: each one's
 * target is {@code floor(capacity / served)}, and the remainder goes one each to those that joined
 * first, so the targets add up to exactly the capacity and none is below the {@linkplain
 * Builder#minimumShare minimum}. Members beyond them are <em>parked</em> at 0 until a served one
 * leaves; a newcomer never takes the place of a member that holds its share. A share is 0 or at
 * least the minimum. A member grows only into what the others have given back: Redis records what
 * each member may be holding, a member grows after Redis raised its record, and lowers its record
 * only at the heartbeat after it shrank. So the shares held at any moment add up to at most the
 * capacity. A member never grows in the heartbeat that registers it, so after Redis lost its data
 * every member registers what it holds again before any grows, unless a member's heartbeat is late
 * by a whole interval. A newcomer starts at 0 and reaches its target within about two heartbeats,
 * as the others shrink; {@link #awaitShare} waits for that, and returns at once when it is parked.
 *
 * <p><b>Leaving.</b> {@link #close()} removes this member at once; the others grow at their next
 * heartbeat. A member that dies without closing keeps its share until its heartbeat expires, one
 * TTL after the last one; the next heartbeat of another member then gives its share back to the
 * fleet.
 *
 * <p><b>When Redis is unreachable</b> a member keeps its last share (before the first heartbeat
 * answers: the {@link Builder#startingShare starting share}, 0 by default) and tries again at every
 * heartbeat; the switch is logged once each way, and start-up never fails because of it. Worst
 * case: a member cut off for longer than the TTL counts as dead for the others, who take its share
 * while it still holds it, so the fleet may hold the capacity plus the shares of the members cut
 * off from Redis (plus the starting shares of members that started while Redis was down). A pause
 * counts the same: a member whose heartbeat comes more than a TTL after the one before (a GC pause,
 * a starved host) may have been counted dead meanwhile; it logs a warning, and its heartbeat gives
 * it what fits again. Keep the TTL above the longest pause.
 *
 * <p><b>Listeners</b> run on a thread of this budget's own (never the heartbeat's, so a slow one
 * cannot make this member look dead), one change at a time, never under a lock, after the share
 * changed; changes that come while they run are merged into one. The protocol counts on them: a
 * listener must have released what it held beyond the new share when it returns (resources in use
 * may follow when their users give them back, as a connection pool's busy connections do; that lag
 * is on top of the capacity), or throw. An exception is logged, and a smaller share it failed to
 * apply is not reported to Redis: the others keep counting the larger one, and the listeners are
 * called again at the next heartbeat.
 *
 * <p>This class is thread-safe.
 */
/*
 * Threads and races
 * -----------------
 * Two threads. The scheduler thread runs every heartbeat, so heartbeats never overlap; the listener
 * thread runs the listeners, one change at a time, so a slow listener (a pool opening connections on a
 * loaded host) never delays a heartbeat: a member whose heartbeats waited for its listeners could be
 * counted dead while it holds its share, and the others would grow into it. Under `applyLock`:
 * `applied` (what the listeners last applied), `applying` (what they are applying now, NONE when
 * idle), `latest` (the share the last heartbeat returned) and `applyQueued`. A heartbeat holds
 * `applyLock` across its script (never during a listener), so what it reports and what the listener
 * thread may apply are decided in one order. `share` is volatile: readers (share(), awaitShare, a
 * supplier read inside a listener) see either the old or the new value.
 *   Report: a heartbeat reports max(applied, applying): what this member may hold until the next one.
 *   Grow:   script raises held[me] -> latest = new -> the listener thread takes it (applying = new,
 *           share = new) -> listeners grow -> applied = new. It takes `latest` under the lock, after
 *           the heartbeat that counted it and before any later one, which reports applying: a reader
 *           that sees the new share sees one Redis counts, and the sum stays within the capacity.
 *   Shrink: script returns less -> latest = new -> share = new -> listeners shrink -> applied = new,
 *           reported at the first heartbeat after that. Until then Redis still counts the old share
 *           (max(applied, applying) is the old one), so no other member grows into it while this one
 *           is releasing; the interval is the grace for resources closing asynchronously.
 *   Changes while listeners run: the heartbeat only moves `latest`; when the listeners return, the
 *           listener thread takes the newest `latest` (changes in between are skipped, the listeners
 *           hear previous -> newest).
 *   awaitShare vs a change: `target` (heartbeat) and `share` (listener thread) are written and then
 *           signalled under `changed`'s lock; a waiter checks both under the same lock before
 *           awaiting, so no signal is lost, and a member parked meanwhile wakes its waiter.
 *   A listener fails: `applied` keeps the larger of the two shares, so Redis goes on counting it and
 *           nobody grows into what this member still holds; the next heartbeat finds `latest` differs
 *           from `applied` and queues the listeners again.
 *   close vs heartbeat: close shuts the scheduler down and waits for a running heartbeat to finish
 *           (bounded by the longest a heartbeat can take: connecting, then two commands) before
 *           leaving, so a heartbeat cannot register the member again after it left, and the store
 *           is used by one thread at a time; then it stops the listener thread the same way.
 */
public final class FleetBudget implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");
  private static final AtomicInteger BUDGETS = new AtomicInteger();
  private static final int HEARTBEATS_PER_TTL = 3;
  private static final int UNKNOWN = Integer.MAX_VALUE; // no heartbeat has answered yet
  private static final int NONE = -1; // no listener is applying a share

  /** Called when this instance's share changes. */
  @FunctionalInterface
  public interface Listener {
    /** This member's share went from {@code previous} to {@code share}; see the class comment. */
    void shareChanged(FleetBudget budget, int previous, int share);
  }

  private final String name;
  private final int capacity;
  private final long ttlMillis;
  private final long longestHeartbeatNanos; // connecting, then EVALSHA and EVAL after a NOSCRIPT
  private final String memberId = UUID.randomUUID().toString();
  private final ShareStore store;
  private final String where;
  private final ScheduledThreadPoolExecutor scheduler;
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final ReentrantLock changedLock = new ReentrantLock();
  private final Condition changed = changedLock.newCondition();
  private final int minimumShare;
  private volatile int share;
  private volatile int live;
  private volatile int target = UNKNOWN; // this member's target at the last heartbeat; 0: parked
  private volatile boolean reachable = true;
  private boolean conflictLogged; // confined to the heartbeat thread
  private final ReentrantLock applyLock = new ReentrantLock();
  private final ScheduledThreadPoolExecutor listenerThread;
  private int applied; // under applyLock
  private int applying = NONE; // under applyLock
  private int latest; // under applyLock
  private boolean applyQueued; // under applyLock
  private long lastSentNanos; // when the last heartbeat that reached Redis was sent; heartbeat's
  private final AtomicLong lateHeartbeats = new AtomicLong();
  private long
      joinedAt; // when Redis first registered this member; confined to the heartbeat thread

  private FleetBudget(Builder b, RedisURI uri) {
    this.name = b.name;
    this.capacity = b.capacity;
    this.minimumShare = b.minimumShare;
    this.ttlMillis = b.ttl.toMillis();
    this.longestHeartbeatNanos = b.connectTimeout.plus(b.commandTimeout.multipliedBy(2)).toNanos();
    LettuceShareStore lettuce = new LettuceShareStore(uri, b.connectTimeout, b.commandTimeout);
    this.store = lettuce;
    this.where = lettuce.where();
    this.share = b.startingShare;
    this.applied = b.startingShare;
    this.latest = b.startingShare;
    int id = BUDGETS.incrementAndGet();
    this.scheduler =
        new ScheduledThreadPoolExecutor(1, DaemonThreads.named("bulkhead-fleet-budget-" + id));
    this.listenerThread =
        new ScheduledThreadPoolExecutor(
            1, DaemonThreads.named("bulkhead-fleet-budget-" + id + "-listeners"));
    try {
      beat(true); // no listener yet, and the scheduler has not started: confined to this thread
    } catch (RuntimeException e) {
      scheduler.shutdownNow();
      listenerThread.shutdownNow();
      store.close();
      throw e;
    }
    long every = TimeUnit.MILLISECONDS.toNanos(ttlMillis) / HEARTBEATS_PER_TTL;
    scheduler.scheduleWithFixedDelay(() -> beat(false), every, every, TimeUnit.NANOSECONDS);
  }

  /**
   * Starts describing the fleet budget called {@code name}; instances that share it use one name.
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The budget's name. */
  public String name() {
    return name;
  }

  /** What the fleet may hold together. */
  public int capacity() {
    return capacity;
  }

  /** The least share a served member is given; see {@link Builder#minimumShare}. */
  public int minimumShare() {
    return minimumShare;
  }

  /**
   * Whether the fleet had no room for this member at the last heartbeat that reached Redis: more
   * members are live than {@code capacity / minimumShare}, and the ones that joined before this one
   * are served. Its share is then 0 until one of them leaves.
   */
  public boolean parked() {
    return target == 0;
  }

  /** This instance's share now: what it may hold. */
  public int share() {
    return share;
  }

  /** How many members were alive at the last heartbeat that reached Redis, this one included. */
  public int liveMembers() {
    return live;
  }

  /** Whether the last heartbeat reached Redis. */
  public boolean reachable() {
    return reachable;
  }

  /**
   * This member's id in Redis (random per instance); it orders members that joined in the same
   * millisecond.
   */
  public String memberId() {
    return memberId;
  }

  /**
   * Waits until this instance's share is at least {@code atLeast} or {@code maxWait} passed, and
   * returns the share then. A newcomer starts at 0 and is given room as the others shrink, within
   * about two heartbeats (two thirds of the TTL) while Redis answers. It does not wait for what the
   * fleet will not give: when this member is {@linkplain #parked() parked}, or its target share is
   * below {@code atLeast}, it returns the share at once (a listener hears when that changes).
   *
   * @throws IllegalArgumentException if {@code atLeast} is less than 1 or more than the capacity
   */
  public int awaitShare(int atLeast, Duration maxWait) throws InterruptedException {
    if (atLeast < 1 || atLeast > capacity) {
      throw new IllegalArgumentException(
          "atLeast must be between 1 and the capacity "
              + capacity
              + " of fleet budget '"
              + name
              + "' but was "
              + atLeast);
    }
    long left = Objects.requireNonNull(maxWait, "maxWait").toNanos();
    changedLock.lock();
    try {
      while (share < atLeast && target >= atLeast && left > 0) {
        left = changed.awaitNanos(left);
      }
      return share;
    } finally {
      changedLock.unlock();
    }
  }

  /** Adds a listener, called on every later change of the share; see the class comment. */
  public void addListener(Listener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Removes a listener; returns whether it was there. */
  public boolean removeListener(Listener listener) {
    return listeners.remove(listener);
  }

  private void beat(boolean first) {
    boolean queue;
    applyLock.lock(); // across the script: see "Report" and "Grow" in the class comment
    try {
      if (!heartbeat(first)) {
        return;
      }
      if (first) { // no listener can be registered yet: the share is applied as it is
        share = latest;
        applied = latest;
        return;
      }
      queue = latest != applied && !applyQueued;
      applyQueued |= queue;
    } finally {
      applyLock.unlock();
    }
    if (queue) {
      try {
        listenerThread.execute(this::applyLatest);
      } catch (RejectedExecutionException e) {
        // closing: the listeners are not called any more
      }
    }
  }

  /** One heartbeat, under applyLock; false when it did not reach Redis or was refused. */
  private boolean heartbeat(boolean first) {
    ShareStore.Beat beat;
    long sent = System.nanoTime();
    int report = Math.max(applied, applying);
    try {
      beat = store.heartbeat(name, memberId, ttlMillis, capacity, minimumShare, report, joinedAt);
    } catch (StoreUnavailableException e) {
      if (reachable) {
        reachable = false;
        LOG.log(
            Level.WARNING,
            "fleet budget '"
                + name
                + "': Redis at "
                + where
                + " is unreachable;"
                + " keeping the share of "
                + share
                + " until it answers ("
                + e.getMessage()
                + ")");
      }
      return false;
    } catch (RuntimeException e) {
      if (first) {
        throw e;
      }
      LOG.log(Level.ERROR, "fleet budget '" + name + "': heartbeat failed", e); // keep beating
      return false;
    }
    if (!reachable || first) {
      reachable = true;
      LOG.log(Level.INFO, "fleet budget '" + name + "': registered on Redis at " + where);
    }
    noteLateness(first, sent, report);
    if (beat.conflictingCapacity() != 0) {
      String conflict =
          "fleet budget '"
              + name
              + "' has capacity "
              + capacity
              + " and minimum share "
              + minimumShare
              + " here but "
              + beat.conflictingCapacity()
              + " and "
              + beat.conflictingMinimum()
              + " in the "
              + beat.live()
              + " other live instance(s): give"
              + " every instance the same capacity and minimum share";
      if (first) {
        throw new IllegalArgumentException(conflict);
      }
      if (!conflictLogged) {
        conflictLogged = true;
        LOG.log(Level.ERROR, conflict + "; keeping the share of " + share);
      }
      return false;
    }
    live = beat.live();
    joinedAt = beat.joinedAt();
    boolean wasParked = target == 0;
    target = beat.target();
    if (target == 0 && !wasParked) {
      LOG.log(
          Level.WARNING,
          "fleet budget '"
              + name
              + "': parked with nothing; "
              + beat.live()
              + " instances are live and a capacity of "
              + capacity
              + " serves "
              + capacity / minimumShare
              + " with at least "
              + minimumShare);
    }
    latest = beat.share();
    signalChange(); // the target may have changed: a waiter in awaitShare may give up
    return true;
  }

  /** On the listener thread: brings the listeners to the newest share, one change at a time. */
  private void applyLatest() {
    for (; ; ) {
      int previous;
      int next;
      applyLock.lock();
      try {
        if (latest == applied) {
          applyQueued = false;
          return;
        }
        previous = applied;
        next = latest;
        applying = next;
      } finally {
        applyLock.unlock();
      }
      share = next;
      signalChange();
      boolean failed = false;
      for (Listener l : listeners) {
        try {
          l.shareChanged(this, previous, next);
        } catch (RuntimeException e) {
          failed = true;
          LOG.log(
              Level.ERROR,
              "fleet budget '" + name + "': a listener failed to apply the share of " + next,
              e);
        }
      }
      applyLock.lock();
      try {
        // A smaller share a listener could not apply is not reported: Redis keeps counting the
        // larger one, and the next heartbeat queues the listeners again. A larger one Redis counts.
        applied = failed ? Math.max(previous, next) : next;
        applying = NONE;
        if (failed) {
          applyQueued = false;
          return;
        }
      } finally {
        applyLock.unlock();
      }
    }
  }

  /**
   * A heartbeat answered more than one TTL after the previous one was sent may have found this
   * member's record expired: the others could have taken its share while it still held it (a pause
   * of this process, or of its heartbeat thread on a starved host). Counted and logged when this
   * member held something.
   */
  private void noteLateness(boolean first, long sent, int held) {
    long gapNanos = System.nanoTime() - lastSentNanos;
    if (!first && held > 0 && gapNanos > TimeUnit.MILLISECONDS.toNanos(ttlMillis)) {
      lateHeartbeats.incrementAndGet();
      LOG.log(
          Level.WARNING,
          "fleet budget '"
              + name
              + "': a heartbeat was answered "
              + TimeUnit.NANOSECONDS.toMillis(gapNanos)
              + " ms after the previous one was sent, more than the TTL of "
              + ttlMillis
              + " ms: the others may have taken this share of "
              + held
              + " while it was held (a longer TTL rides out such pauses)");
    }
    lastSentNanos = sent;
  }

  /**
   * Heartbeats answered more than one TTL after the previous one: each may have let the fleet hold
   * more than its capacity for a while (the worst case in the class comment). For tests.
   */
  long lateHeartbeats() {
    return lateHeartbeats.get();
  }

  private void signalChange() {
    changedLock.lock();
    try {
      changed.signalAll();
    } finally {
      changedLock.unlock();
    }
  }

  /**
   * Stops heartbeating and leaves the fleet now, so the others take this share at their next beat.
   * When the last heartbeat did not reach Redis it does not try again: the share returns after the
   * TTL.
   */
  @Override
  public void close() {
    if (stop() && reachable) {
      try {
        store.leave(name, memberId);
      } catch (StoreUnavailableException e) {
        LOG.log(
            Level.WARNING,
            "fleet budget '"
                + name
                + "': could not leave ("
                + e.getMessage()
                + "); the others take this share when its heartbeat expires");
      }
    }
    store.close();
  }

  /** Stops heartbeating without leaving, as a process that dies would; for tests. */
  void abandon() {
    stop();
    store.close();
  }

  private boolean stop() {
    if (scheduler.isShutdown()) {
      return false;
    }
    scheduler.shutdownNow();
    listenerThread.shutdownNow(); // no queued change starts
    try {
      scheduler.awaitTermination(longestHeartbeatNanos, TimeUnit.NANOSECONDS);
      listenerThread.awaitTermination(longestHeartbeatNanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }

  @Override
  public String toString() {
    return "FleetBudget{"
        + name
        + ", share="
        + share
        + " of "
        + capacity
        + ", live="
        + live
        + (parked() ? ", parked" : "")
        + "}";
  }

  /**
   * Describes a fleet budget; {@link #join} registers this instance. This class is <em>not</em>
   * thread-safe.
   */
  public static final class Builder {

    private static final Duration MIN_TTL = Duration.ofMillis(300);
    private final String name;
    private int capacity;
    private int minimumShare = 1;
    private int startingShare;
    private Duration ttl = Duration.ofSeconds(6);
    private Duration commandTimeout = Duration.ofMillis(500);
    private Duration connectTimeout = Duration.ofSeconds(5);

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException(
            "fleet budget name must not be blank but was '" + name + "'");
      }
      this.name = name;
    }

    /** What the whole fleet may hold together; every instance must give the same. At least 1. */
    public Builder capacity(int capacity) {
      if (capacity < 1) {
        throw new IllegalArgumentException(
            "capacity of fleet budget '" + name + "' must be at least 1 but was " + capacity);
      }
      this.capacity = capacity;
      return this;
    }

    /**
     * The least share a member can work with: its pools' count when every pool needs one
     * connection, say. A member's share is then 0 or at least this: the fleet serves {@code
     * capacity / minimumShare} members, in the order they joined, and parks the others at 0 until
     * one of those leaves. Every instance must give the same; 1 by default, at most the capacity.
     */
    public Builder minimumShare(int minimumShare) {
      if (minimumShare < 1) {
        throw new IllegalArgumentException(
            "minimumShare of fleet budget '"
                + name
                + "' must be at least 1 but was "
                + minimumShare);
      }
      this.minimumShare = minimumShare;
      return this;
    }

    /**
     * How long a member counts as alive after its last heartbeat (heartbeats come every third of
     * it): how long a dead instance's share stays taken, at most. 6 seconds by default, at least
     * 300 ms.
     */
    public Builder ttl(Duration ttl) {
      Objects.requireNonNull(ttl, "ttl");
      if (ttl.compareTo(MIN_TTL) < 0) {
        throw new IllegalArgumentException(
            "ttl of fleet budget '"
                + name
                + "' must be at least "
                + MIN_TTL.toMillis()
                + " ms but was "
                + ttl);
      }
      this.ttl = ttl;
      return this;
    }

    /**
     * The share before Redis first answers; 0 by default (nothing until the fleet makes room). A
     * larger value lets an instance start while Redis is down, on top of the capacity until Redis
     * answers (see the worst case in the class comment).
     */
    public Builder startingShare(int startingShare) {
      if (startingShare < 0) {
        throw new IllegalArgumentException(
            "startingShare of fleet budget '"
                + name
                + "' must not be negative but was "
                + startingShare);
      }
      this.startingShare = startingShare;
      return this;
    }

    /** How long one heartbeat may take before Redis counts as unreachable; 500 ms by default. */
    public Builder commandTimeout(Duration commandTimeout) {
      this.commandTimeout = positive("commandTimeout", commandTimeout);
      return this;
    }

    /** How long opening the connection may take; 5 seconds by default (see RedisCompartments). */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = positive("connectTimeout", connectTimeout);
      return this;
    }

    /**
     * Registers this instance with the Redis at {@code uri} and starts its heartbeats. Never fails
     * because Redis is unreachable (the share is then the starting share until it answers).
     *
     * @throws IllegalArgumentException if no capacity was set, the starting share is more than the
     *     capacity, {@code uri} is not a Redis URI, or the live instances registered another
     *     capacity
     */
    public FleetBudget join(String uri) {
      Objects.requireNonNull(uri, "uri");
      return join(RedisUris.parse("uri", uri));
    }

    /** Registers this instance with the Redis at {@code uri}; see {@link #join(String)}. */
    public FleetBudget join(RedisURI uri) {
      Objects.requireNonNull(uri, "uri");
      if (capacity == 0) {
        throw new IllegalArgumentException(
            "capacity of fleet budget '" + name + "' was not set:" + " call capacity(int)");
      }
      if (minimumShare > capacity) {
        throw new IllegalArgumentException(
            "minimumShare of fleet budget '"
                + name
                + "' is "
                + minimumShare
                + ", more than its capacity of "
                + capacity);
      }
      if (startingShare > capacity) {
        throw new IllegalArgumentException(
            "startingShare of fleet budget '"
                + name
                + "' is "
                + startingShare
                + ", more than its capacity of "
                + capacity);
      }
      return new FleetBudget(this, uri);
    }

    private Duration positive(String field, Duration value) {
      Objects.requireNonNull(value, field);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(
            field + " of fleet budget '" + name + "' must be positive but was " + value);
      }
      return value;
    }
  }
}
