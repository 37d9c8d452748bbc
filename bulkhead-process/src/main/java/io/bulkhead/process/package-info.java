/**
 * A worker class in a child JVM with its own CPU and memory ceiling, restarted with backoff when it
 * dies: {@link io.bulkhead.process.WorkerProcess}, its figures {@link
 * io.bulkhead.process.ProcessStats}, and how it last ended, {@link io.bulkhead.process.Exit}. For
 * one machine and for demonstrations; Docker and Kubernetes are the engines for this in production.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}; values that may be absent are {@link
 * java.util.Optional}s.
 */
@NullMarked
package io.bulkhead.process;

import org.jspecify.annotations.NullMarked;
