/**
 * Compartments that cap how much of a process one dependency may hold: {@link io.bulkhead.Bulkhead}
 * (admission: call, submit, acquire), the {@link io.bulkhead.Compartment} view that registries,
 * metrics and budgets take, {@link io.bulkhead.WorkerPool} for background jobs, {@link
 * io.bulkhead.Budget} for compartments that share one real resource, and {@link
 * io.bulkhead.BulkheadRegistry} to hold an application's compartments.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}; values that may be absent are {@link
 * java.util.Optional}s.
 */
@NullMarked
package io.bulkhead;

import org.jspecify.annotations.NullMarked;
