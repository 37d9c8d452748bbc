package io.bulkhead.process;

import java.util.List;
import java.util.Objects;

/**
 * How one process of a {@link WorkerProcess} ended.
 *
 * @param cause why, as far as the supervisor can tell
 * @param code the process's exit value as Java reports it ({@code 128 + n} for signal {@code n});
 *     -1 when it could not be started at all
 * @param description one sentence for a person: {@code "killed by the kernel at its 192 MiB memory
 *     limit"}
 * @param lastLines the last lines it printed, oldest first (at most 10, from its last 4 KiB of
 *     output), whether or not anybody read its output: a stack trace, the launcher's reason
 */
public record Exit(Cause cause, int code, String description, List<String> lastLines) {

  /** Why a worker's process ended. */
  public enum Cause {
    /** The kernel killed it at its control group's memory limit (the group's OOM count rose). */
    KILLED_AT_MEMORY_LIMIT,
    /** Its JVM ran out of heap at {@code -Xmx} and exited ({@code -XX:+ExitOnOutOfMemoryError}). */
    OUT_OF_HEAP,
    /** A signal ended it ({@code kill -9}, say): {@link #signal()} says which. */
    SIGNALLED,
    /** It exited with {@link #code()}. */
    EXITED,
    /**
     * It could not be started or put into its group, or its JVM said it cannot start (a missing
     * main class, a bad JVM option: then it is not restarted, since another try would fail the same
     * way): {@link #description()} says why, {@link #lastLines()} what the JVM printed.
     */
    DID_NOT_START
  }

  /** The exit value a JVM reports for a process ended by signal {@code n}: this plus {@code n}. */
  static final int SIGNAL_BASE = 128;

  /** Checks that nothing is null; copies the lines. */
  public Exit {
    Objects.requireNonNull(cause, "cause");
    Objects.requireNonNull(description, "description");
    lastLines = List.copyOf(lastLines);
  }

  /**
   * The signal that ended the process when {@link #cause()} is SIGNALLED or KILLED_AT_MEMORY_LIMIT;
   * 0 otherwise.
   */
  public int signal() {
    return (cause == Cause.SIGNALLED || cause == Cause.KILLED_AT_MEMORY_LIMIT) && code > SIGNAL_BASE
        ? code - SIGNAL_BASE
        : 0;
  }

  @Override
  public String toString() {
    return description;
  }
}
