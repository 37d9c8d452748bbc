package io.bulkhead;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The compartments of one application, by name: what metrics binders, dashboards and configuration
 * loaders work from.
 *
 * <p>Compartments can be added and removed while the application runs; {@link Listener}s hear of
 * both (a metrics binder registers and removes meters from them). Listeners are called after the
 * change, outside the registry's lock, on the thread that made the change; one that throws does not
 * stop the others and does not undo the change.
 *
 * <p>Any kind of {@link Compartment} can be registered: a {@link Bulkhead}, a {@link WorkerPool}'s
 * {@linkplain WorkerPool#compartment() view}, a connection pool's, or a decorator of your own.
 * {@link #find} returns them all; {@link #bulkhead} only the ones that admit calls themselves.
 * Removing one gives its budget share back through {@link Compartment#leaveBudget()}, whatever its
 * class.
 *
 * <p>This class is thread-safe. It never calls a compartment, a factory or a listener while it
 * holds its lock, so none of them can stall the registry for everyone or deadlock against it.
 */
/*
 * Algorithm and invariants
 * ------------------------
 * `byName` and `creating` are guarded by `lock`, which is held only for map operations: every call
 * into user code (Compartment.name/leaveBudget/toString, factories, listeners) happens before taking it
 * or after releasing it. G1: a name is in `creating` exactly while one computeIfAbsent runs its
 * factory for it; that caller alone inserts under the name through computeIfAbsent, and completes the
 * Creation's future (with the compartment now registered, or null if the factory threw) after removing
 * it from `creating`.
 *
 * Races, as interleavings
 * -----------------------
 *   G2 computeIfAbsent vs computeIfAbsent. T1 finds the name free and puts its Creation; T2 finds the
 *      Creation and parks on its future; T1's factory returns, T1 inserts, removes the Creation and
 *      completes the future; T2 returns T1's compartment. T2's factory never runs. If T1's factory
 *      throws, T1 removes the Creation and completes with null; T2 loops, finds the name free and runs
 *      its own. A factory that calls computeIfAbsent for its own name is refused (it would park on
 *      its own future).
 *   G3 computeIfAbsent vs register. T1's factory runs while T2 registers the same name (register does
 *      not look at `creating`). T1 then finds the name taken under the lock, inserts nothing, gives its
 *      compartment's budget share back outside the lock and returns T2's: a caller of either method
 *      gets the registered compartment.
 *   G4 remove vs listeners. remove takes the compartment out under the lock and calls leaveBudget and
 *      the listeners after releasing it; a concurrent register of the same name may already succeed,
 *      and its listeners' onAdded may then run before the old one's onRemoved.
 */
public final class BulkheadRegistry {

  private static final System.Logger LOG = System.getLogger("io.bulkhead");

  /** Hears of compartments added to and removed from a registry. */
  public interface Listener {

    /** {@code bulkhead} was added (or existed when the listener was added). */
    default void onAdded(Compartment bulkhead) {}

    /** {@code bulkhead} was removed. */
    default void onRemoved(Compartment bulkhead) {}
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final LinkedHashMap<String, Compartment> byName =
      new LinkedHashMap<>(); // guarded by lock
  private final HashMap<String, Creation> creating = new HashMap<>(); // guarded by lock
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  /** A factory running for a name; callers for the same name wait for its result. */
  private static final class Creation {
    final Thread builder;

    /** The compartment registered under the name, or null if the factory failed. */
    final CompletableFuture<Compartment> result = new CompletableFuture<>();

    Creation(Thread builder) {
      this.builder = builder;
    }
  }

  private BulkheadRegistry() {}

  /** Returns an empty registry. */
  public static BulkheadRegistry create() {
    return new BulkheadRegistry();
  }

  /**
   * Adds a compartment.
   *
   * @return {@code bulkhead}
   * @throws IllegalArgumentException if a compartment with the same name is registered
   */
  public <C extends Compartment> C register(C bulkhead) {
    Objects.requireNonNull(bulkhead, "bulkhead");
    String name = Objects.requireNonNull(bulkhead.name(), "bulkhead.name()"); // user code: unlocked
    lock.lock();
    try {
      if (byName.containsKey(name)) {
        throw new IllegalArgumentException("a bulkhead named '" + name + "' is already registered");
      }
      byName.put(name, bulkhead);
    } finally {
      lock.unlock();
    }
    for (Listener l : listeners) {
      notifyAdded(l, bulkhead);
    }
    return bulkhead;
  }

  /**
   * Returns the compartment named {@code name}, building and adding it with {@code factory} if
   * there is none. The factory must return a compartment with that name.
   *
   * <p>The factory runs outside the registry's lock, so it may take its time and may use the
   * registry for other names. While it runs, other callers of this method for the same name wait
   * for its result instead of running their own factories, so for calls to this method alone the
   * factory runs at most once per name (a second compartment of that name would, for one, fail to
   * join the first one's {@link Budget}). Calls for other names and every other method of the
   * registry go on meanwhile. If the factory throws, that exception reaches its caller and one of
   * the waiting callers runs its own factory in turn.
   *
   * <p>If {@link #register} adds a compartment of the same name while the factory runs, the one
   * registered wins and is returned: the one the factory built is discarded, and its budget share
   * given back through {@link Compartment#leaveBudget()}. The same happens to a compartment whose
   * name is not {@code name}, before the {@link IllegalArgumentException} that reports it.
   *
   * @throws IllegalArgumentException if the factory built a compartment with another name
   * @throws IllegalStateException if the factory calls this method for the same name (it would wait
   *     for itself)
   */
  public Compartment computeIfAbsent(String name, Function<String, ? extends Compartment> factory) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(factory, "factory");
    for (; ; ) {
      Creation creation;
      boolean mine;
      lock.lock();
      try {
        Compartment existing = byName.get(name);
        if (existing != null) {
          return existing;
        }
        creation = creating.get(name);
        mine = creation == null;
        if (mine) {
          creation = new Creation(Thread.currentThread());
          creating.put(name, creation);
        } else if (creation.builder == Thread.currentThread()) {
          throw new IllegalStateException(
              "the factory building '"
                  + name
                  + "' called"
                  + " computeIfAbsent for '"
                  + name
                  + "' again; it would wait for itself");
        }
      } finally {
        lock.unlock();
      }
      if (mine) {
        return create(name, factory, creation);
      }
      Compartment built = creation.result.join(); // parks; the factory runs without our lock
      if (built != null) {
        return built;
      }
      // That factory threw: build our own (the loop finds the name free, or a newer creation).
    }
  }

  /** Runs {@code factory} for {@code name} outside the lock, on behalf of {@code creation}. */
  private Compartment create(
      String name, Function<String, ? extends Compartment> factory, Creation creation) {
    Compartment created = null;
    Compartment winner;
    try {
      created =
          Objects.requireNonNull(factory.apply(name), "factory for '" + name + "' returned null");
      String builtName = created.name();
      if (!name.equals(builtName)) {
        throw new IllegalArgumentException(
            "factory for '" + name + "' built a bulkhead named '" + builtName + "'");
      }
      lock.lock();
      try {
        winner = byName.get(name); // registered by register() while the factory ran
        if (winner == null) {
          byName.put(name, created);
        }
        creating.remove(name);
      } finally {
        lock.unlock();
      }
    } catch (RuntimeException | Error e) {
      lock.lock();
      try {
        creating.remove(name);
      } finally {
        lock.unlock();
      }
      creation.result.complete(null); // a waiting caller runs its own factory
      if (created != null) {
        giveBack(name, created);
      }
      throw e;
    }
    if (winner != null) {
      giveBack(name, created);
      creation.result.complete(winner);
      return winner;
    }
    creation.result.complete(created);
    for (Listener l : listeners) {
      notifyAdded(l, created);
    }
    return created;
  }

  /** Returns the compartment named {@code name}, if registered. */
  public Optional<Compartment> find(String name) {
    lock.lock();
    try {
      return Optional.ofNullable(byName.get(name));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the compartment named {@code name} if it is registered and admits calls itself (a
   * {@link Bulkhead}); empty for a name not registered and for a view such as a worker pool's.
   */
  public Optional<Bulkhead> bulkhead(String name) {
    return find(name).filter(Bulkhead.class::isInstance).map(Bulkhead.class::cast);
  }

  /** Returns the registered compartments in the order they were added. */
  public List<Compartment> all() {
    lock.lock();
    try {
      return Collections.unmodifiableList(new ArrayList<>(byName.values()));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes the compartment named {@code name}; calls already in it finish normally. If it drew on
   * a {@link Budget}, its share is returned to the budget.
   *
   * @return the removed compartment, if there was one
   */
  public Optional<Compartment> remove(String name) {
    Compartment removed;
    lock.lock();
    try {
      removed = byName.remove(name);
    } finally {
      lock.unlock();
    }
    if (removed == null) {
      return Optional.empty();
    }
    giveBack(name, removed);
    for (Listener l : listeners) {
      try {
        l.onRemoved(removed);
      } catch (Throwable t) {
        LOG.log(System.Logger.Level.WARNING, "registry listener " + l + " threw from onRemoved", t);
      }
    }
    return Optional.of(removed);
  }

  /**
   * Adds a listener and calls its {@link Listener#onAdded} at once for every compartment already
   * registered, so it misses none.
   */
  public void addListener(Listener listener) {
    Objects.requireNonNull(listener, "listener");
    listeners.add(listener);
    for (Compartment b : all()) {
      notifyAdded(listener, b);
    }
  }

  public boolean removeListener(Listener listener) {
    return listeners.remove(listener);
  }

  /** Returns a discarded compartment's budget share; outside the lock, as it is user code. */
  private static void giveBack(String name, Compartment discarded) {
    try {
      discarded.leaveBudget();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "compartment '" + name + "' threw from leaveBudget", e);
    }
  }

  private static void notifyAdded(Listener l, Compartment b) {
    try {
      l.onAdded(b);
    } catch (Throwable t) {
      LOG.log(System.Logger.Level.WARNING, "registry listener " + l + " threw from onAdded", t);
    }
  }

  @Override
  public String toString() {
    return "BulkheadRegistry" + all();
  }
}
