package io.bulkhead.process;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A {@link WorkerProcess} at one moment: its state, its ceilings and what its current process uses
 * of them, and how often it died and was restarted.
 *
 * @param name the worker's name
 * @param state where its supervision is
 * @param pid the current process's id; empty while none runs
 * @param ceilings which ceilings hold it
 * @param cpus the CPUs it is granted (a CFS quota under cgroup ceilings)
 * @param cpusUsed the CPUs its current process used since the previous {@link
 *     WorkerProcess#stats()} (or since it started): 0.5 is half a CPU's time; 0 while none runs
 * @param memoryLimitBytes its memory limit
 * @param memoryUsedBytes what it holds now: the group's charge under cgroup ceilings, the process's
 *     resident set under JVM ones; empty when unreadable or while none runs
 * @param throttledPeriods CFS periods its group was throttled in (0 under JVM ceilings)
 * @param deaths how many of its processes ended while it was supervised
 * @param restarts how many processes were started after the first
 * @param lastExit how the latest one ended; empty until one does
 * @param backoff the wait before the next restart while {@link WorkerProcess.State#BACKING_OFF},
 *     else {@link Duration#ZERO}
 */
public record ProcessStats(
    String name,
    WorkerProcess.State state,
    OptionalLong pid,
    Ceilings ceilings,
    double cpus,
    double cpusUsed,
    long memoryLimitBytes,
    OptionalLong memoryUsedBytes,
    long throttledPeriods,
    int deaths,
    int restarts,
    Optional<Exit> lastExit,
    Duration backoff) {

  /** Checks that nothing is null. */
  public ProcessStats {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(pid, "pid");
    Objects.requireNonNull(ceilings, "ceilings");
    Objects.requireNonNull(memoryUsedBytes, "memoryUsedBytes");
    Objects.requireNonNull(lastExit, "lastExit");
    Objects.requireNonNull(backoff, "backoff");
  }
}
