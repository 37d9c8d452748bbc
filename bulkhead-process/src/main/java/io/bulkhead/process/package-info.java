/**
 * A worker class in a child JVM with its own CPU and memory ceiling, restarted with backoff when it
 * dies: {@link io.bulkhead.process.WorkerProcess}, its figures {@link
 * io.bulkhead.process.ProcessStats}, and how it last ended, {@link io.bulkhead.process.Exit}.
 *
 * <p><b>What it guarantees.</b> At most one process of a worker runs at a time. Whatever a worker
 * prints, its supervisor holds at most a line of 8 KiB, the last 4 KiB and a read buffer of it. A
 * dying worker is restarted after a backoff that doubles up to its maximum, at most {@code
 * maxRestarts} times in a row (a run of {@code stableAfter} ends the row); one whose JVM cannot
 * start (a missing main class, a bad option) is not restarted, and its {@link
 * io.bulkhead.process.Exit} carries the JVM's own lines. The listener hears every change, in order.
 *
 * <p><b>Where.</b> On Linux, as root (or with a delegated cgroup v2 subtree), with the {@code cpu}
 * and {@code memory} controllers of cgroup v1 or v2: a control group per worker holds a CFS quota,
 * a memory limit without swap and, where the {@code pids} controller is there, a cap on threads;
 * every process the worker starts is born in it, a death kills what the process left there before
 * the restart, and {@code close()} kills everything in it and removes it. Elsewhere (another
 * system, no privileges, {@code kernelCeilings(false)}) the ceilings are the JVM's ({@code -Xmx},
 * {@code -XX:ActiveProcessorCount}: CPU time and threads are not capped), and {@code close()} kills
 * the process and its descendants, so a process orphaned earlier, or forked at the instant of the
 * kill, may outlive it. {@link io.bulkhead.process.ProcessStats#ceilings()} says which ceilings
 * hold; read it at start when the kernel's are required. Java 17 or later; the child runs this
 * JVM's {@code java}.
 *
 * <p><b>How it fails.</b> A bad setting is an {@link IllegalArgumentException} naming it. A group
 * that cannot be created means JVM ceilings (above). A process that cannot be forked is a {@code
 * DID_NOT_START} death, restarted like any other. {@code close()} waits at most 30 s for the
 * supervising thread and 10 s for the processes to end, and logs (on the {@code System.Logger}
 * {@code io.bulkhead.process}) a group it could not remove. A supervisor killed with {@code
 * SIGKILL} cleans nothing: its worker should exit when its standard input ends, and its groups
 * ({@code bulkhead-<pid>-<name>}) stay until removed. It isolates CPU, memory and threads on one
 * host, not the network, the file system or other processes (no namespaces): Docker and Kubernetes
 * do that, and run the fleet.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}; values that may be absent are {@link
 * java.util.Optional}s.
 */
@NullMarked
package io.bulkhead.process;

import org.jspecify.annotations.NullMarked;
