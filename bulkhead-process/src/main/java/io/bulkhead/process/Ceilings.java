package io.bulkhead.process;

/**
 * Which ceilings hold a {@link WorkerProcess}: the kernel's (a control group with a CFS quota and a
 * memory limit without swap, as a container runtime sets them) or, where this process may not
 * create a group, the JVM's own options.
 */
public enum Ceilings {
  /** A cgroup v1 group: {@code cpu.cfs_quota_us}, {@code memory.limit_in_bytes}, swap off. */
  CGROUP_V1("cgroup v1 (cpu.cfs_quota_us, memory.limit_in_bytes, swap off)"),
  /** A cgroup v2 group: {@code cpu.max}, {@code memory.max}, {@code memory.swap.max 0}. */
  CGROUP_V2("cgroup v2 (cpu.max, memory.max, memory.swap.max 0)"),
  /**
   * JVM options: {@code -Xmx} at three quarters of the memory and {@code -XX:ActiveProcessorCount};
   * CPU time itself is not capped, only the threads that size themselves to the processors seen.
   */
  JVM("JVM options (-Xmx, -XX:ActiveProcessorCount)");

  private final String description;

  Ceilings(String description) {
    this.description = description;
  }

  /** Whether the kernel holds the process to them (a control group), not only its JVM. */
  public boolean kernel() {
    return this != JVM;
  }

  /** What they are, for a person: {@code "cgroup v1 (cpu.cfs_quota_us, ...)"}. */
  public String description() {
    return description;
  }
}
