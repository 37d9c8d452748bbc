package io.bulkhead;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The compartments of one application, by name: what metrics binders, dashboards and configuration
 * loaders work from.
 *
 * <p>Compartments can be added and removed while the application runs; {@link Listener}s hear of both
 * (a metrics binder registers and removes meters from them). Listeners are called after the change,
 * outside the registry's lock, on the thread that made the change; one that throws does not stop the
 * others and does not undo the change.
 *
 * <p>This class is thread-safe.
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
  private final LinkedHashMap<String, Compartment> byName = new LinkedHashMap<>(); // guarded by lock
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

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
    lock.lock();
    try {
      if (byName.containsKey(bulkhead.name())) {
        throw new IllegalArgumentException(
            "a bulkhead named '" + bulkhead.name() + "' is already registered");
      }
      byName.put(bulkhead.name(), bulkhead);
    } finally {
      lock.unlock();
    }
    for (Listener l : listeners) {
      notifyAdded(l, bulkhead);
    }
    return bulkhead;
  }

  /**
   * Returns the compartment named {@code name}, building and adding it with {@code factory} if there is
   * none. The factory runs at most once per name; it must return a compartment with that name.
   */
  public Compartment computeIfAbsent(String name, Function<String, ? extends Compartment> factory) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(factory, "factory");
    Compartment created;
    lock.lock();
    try {
      Compartment existing = byName.get(name);
      if (existing != null) {
        return existing;
      }
      created = Objects.requireNonNull(factory.apply(name), "factory returned null");
      if (!created.name().equals(name)) {
        throw new IllegalArgumentException("factory for '" + name + "' built a bulkhead named '"
            + created.name() + "'");
      }
      byName.put(name, created);
    } finally {
      lock.unlock();
    }
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
   * Removes the compartment named {@code name}; calls already in it finish normally. If it drew on a
   * {@link Budget}, its share is returned to the budget.
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
    try {
      removed.leaveBudget();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "compartment '" + name + "' threw from leaveBudget", e);
    }
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
