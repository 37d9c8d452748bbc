package io.bulkhead.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Function;

/*
 * Concurrency
 * -----------
 * bind() and close() may run on any thread, and bind() may be called for several registries.
 * `bindings` and `closed` are guarded by `lock`; each bind() registers its meters while holding it,
 * so close() cannot miss a binding that is half done. Registering a meter runs none of the binder's
 * code: the meters' functions run later, on the scraping thread, never under `lock`.
 *
 *   T1 bind(r); T2 close(). Either T1 takes the lock first, registers and lists its meters, and T2
 *      then removes them; or T2 first sets `closed`, and T1 refuses to bind. No meter survives close().
 */

/**
 * What a meter binder registered, registry by registry, so that closing it removes every meter: the
 * part the Micrometer binders of {@code bulkhead-jdbc} and {@code bulkhead-redis} share. Generic in
 * the registry and meter types, so core names no metrics library. Thread-safe.
 *
 * @param <R> the registry type ({@code MeterRegistry})
 * @param <M> the meter type ({@code Meter})
 */
public final class MeterBindings<R, M> {

  /** The tag every Bulkhead meter carries: the name of its compartment (or pool). */
  public static final String NAME_TAG = "name";

  private final String owner;
  private final BiConsumer<R, M> remove;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Binding<R, M>> bindings = new ArrayList<>(); // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param owner names the binder in the refusal to bind after close ({@code "FleetMetrics of
   *     compartment 'llm'"})
   * @param remove removes one meter from its registry
   */
  public MeterBindings(String owner, BiConsumer<R, M> remove) {
    this.owner = Objects.requireNonNull(owner, "owner");
    this.remove = Objects.requireNonNull(remove, "remove");
  }

  /**
   * Registers meters in {@code registry} with {@code register}, which returns them, and keeps them
   * for {@link #close()}.
   *
   * @throws IllegalStateException if these bindings were closed
   */
  public void bind(R registry, Function<R, List<M>> register) {
    Objects.requireNonNull(registry, "meterRegistry");
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException(owner + " was closed; create a new one to bind again");
      }
      bindings.add(new Binding<>(registry, List.copyOf(register.apply(registry))));
    } finally {
      lock.unlock();
    }
  }

  /** Removes every meter registered so far and refuses later bindings. Idempotent. */
  public void close() {
    lock.lock();
    try {
      closed = true;
      for (Binding<R, M> b : bindings) {
        for (M meter : b.meters) {
          remove.accept(b.registry, meter);
        }
      }
      bindings.clear();
    } finally {
      lock.unlock();
    }
  }

  private record Binding<R, M>(R registry, List<M> meters) {}
}
