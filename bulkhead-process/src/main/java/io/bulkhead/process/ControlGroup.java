package io.bulkhead.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The CPU and memory ceiling of one worker, as a container runtime sets it: a control group with a
 * CFS quota and a memory limit without swap when this process may create one (root, with a writable
 * cgroup v1 {@code cpu} and {@code memory} hierarchy, or a cgroup v2 one), otherwise nothing but
 * the JVM options of {@link #jvmOptions}.
 *
 * <p>A group is created inside this process's own group, so that whatever limits this process lives
 * under also bound its children, and it is named {@code bulkhead-<this pid>-<worker name>} so that
 * two supervisors on one machine never share one. Every incarnation of the worker enters the same
 * group; it is removed when the worker is closed, once its last process is gone.
 */
final class ControlGroup {

  /** The CFS period, the kernel's default: the quota is this times the CPUs granted. */
  private static final long PERIOD_MICROS = 100_000;

  /** The smallest quota the kernel accepts. */
  private static final long LEAST_QUOTA_MICROS = 1_000;

  private static final Path ROOT = Path.of("/sys/fs/cgroup");

  /** How long removing a group waits for the kernel to let go of a process that just died. */
  private static final long REMOVE_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final long REMOVE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  /** The share of the memory a heap may take under JVM ceilings: the rest is the JVM's own. */
  private static final long HEAP_QUARTERS = 3;

  private final Ceilings kind;
  private final List<Path> dirs;
  private final double cpus;
  private final long memoryBytes;

  private ControlGroup(Ceilings kind, List<Path> dirs, double cpus, long memoryBytes) {
    this.kind = kind;
    this.dirs = List.copyOf(dirs);
    this.cpus = cpus;
    this.memoryBytes = memoryBytes;
  }

  /** The prefix of every group this process creates. */
  static String prefix() {
    return "bulkhead-" + ProcessHandle.current().pid() + "-";
  }

  /**
   * A group for worker {@code name} granting {@code cpus} CPUs and {@code memoryBytes} without
   * swap, or one of kind {@link Ceilings#JVM} when the kernel's ceilings are out of reach or not
   * wanted.
   */
  static ControlGroup create(String name, double cpus, long memoryBytes, boolean kernelWanted) {
    if (kernelWanted) {
      List<Path> made = new ArrayList<>();
      try {
        return v1(name, cpus, memoryBytes, made);
      } catch (IOException | RuntimeException v1Refused) {
        removeAll(made);
        made.clear();
      }
      try {
        return v2(name, cpus, memoryBytes, made);
      } catch (IOException | RuntimeException v2Refused) {
        removeAll(made);
      }
    }
    return new ControlGroup(Ceilings.JVM, List.of(), cpus, memoryBytes);
  }

  private static ControlGroup v1(String name, double cpus, long memoryBytes, List<Path> made)
      throws IOException {
    Path cpuDir = ROOT.resolve("cpu").resolve(ownPath("cpu")).resolve(prefix() + name);
    Path memoryDir = ROOT.resolve("memory").resolve(ownPath("memory")).resolve(prefix() + name);
    Files.createDirectory(cpuDir);
    made.add(cpuDir);
    Files.createDirectory(memoryDir);
    made.add(memoryDir);
    write(cpuDir.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_MICROS));
    write(cpuDir.resolve("cpu.cfs_quota_us"), Long.toString(quotaMicros(cpus)));
    write(memoryDir.resolve("memory.limit_in_bytes"), Long.toString(memoryBytes));
    Path memsw = memoryDir.resolve("memory.memsw.limit_in_bytes");
    if (Files.exists(memsw)) {
      write(memsw, Long.toString(memoryBytes)); // memory plus swap = memory: no swap
    }
    return new ControlGroup(Ceilings.CGROUP_V1, made, cpus, memoryBytes);
  }

  private static ControlGroup v2(String name, double cpus, long memoryBytes, List<Path> made)
      throws IOException {
    if (!Files.exists(ROOT.resolve("cgroup.controllers"))) {
      throw new IOException("no cgroup v2 hierarchy at " + ROOT);
    }
    Path parent = ROOT.resolve(ownPath(""));
    String delegated = Files.readString(parent.resolve("cgroup.subtree_control"));
    if (!delegated.contains("cpu") || !delegated.contains("memory")) {
      write(parent.resolve("cgroup.subtree_control"), "+cpu +memory");
    }
    Path dir = parent.resolve(prefix() + name);
    Files.createDirectory(dir);
    made.add(dir);
    write(dir.resolve("cpu.max"), quotaMicros(cpus) + " " + PERIOD_MICROS);
    write(dir.resolve("memory.max"), Long.toString(memoryBytes));
    write(dir.resolve("memory.swap.max"), "0");
    return new ControlGroup(Ceilings.CGROUP_V2, made, cpus, memoryBytes);
  }

  private static long quotaMicros(double cpus) {
    return Math.max(LEAST_QUOTA_MICROS, Math.round(cpus * PERIOD_MICROS));
  }

  /**
   * This process's group in the hierarchy of {@code controller} ("" for cgroup v2), relative: the
   * third field of its line in {@code /proc/self/cgroup}.
   */
  private static String ownPath(String controller) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] fields = line.split(":", 3);
      // v1 lines list their controllers ("4:memory:/path"); the v2 line lists none ("0::/path").
      if (fields.length == 3 && List.of(fields[1].split(",")).contains(controller)) {
        return fields[2].startsWith("/") ? fields[2].substring(1) : fields[2];
      }
    }
    throw new IOException("this process is in no " + controller + " group");
  }

  private static void write(Path file, String value) throws IOException {
    Files.write(file, value.getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE);
  }

  private static void removeAll(List<Path> dirs) {
    for (int i = dirs.size() - 1; i >= 0; i--) {
      removeDir(dirs.get(i));
    }
  }

  /**
   * Removes an empty group; a process killed a moment ago may still count as its member until the
   * kernel has reaped it, so a busy group is retried for a few seconds.
   */
  private static boolean removeDir(Path dir) {
    long deadline = System.nanoTime() + REMOVE_PATIENCE_NANOS;
    while (true) {
      try {
        Files.deleteIfExists(dir);
        return true;
      } catch (IOException busy) {
        if (System.nanoTime() - deadline > 0) {
          return false;
        }
        LockSupport.parkNanos(REMOVE_RETRY_NANOS); // the kernel gives no event to wait for
      }
    }
  }

  Ceilings kind() {
    return kind;
  }

  List<Path> dirs() {
    return dirs;
  }

  /** Options for the child's JVM that the ceilings call for. */
  List<String> jvmOptions() {
    List<String> options = new ArrayList<>();
    if (kind == Ceilings.JVM) {
      options.add("-Xmx" + memoryBytes / 4 * HEAP_QUARTERS / 1024 + "k");
      options.add("-XX:ActiveProcessorCount=" + (int) Math.max(1, Math.ceil(cpus)));
    } else {
      // The heap may use it all: the kernel, not the JVM, is the one to stop a leak.
      options.add("-Xmx" + memoryBytes / 1024 + "k");
    }
    return options;
  }

  /** Moves process {@code pid} (all its threads) into the group; nothing under JVM ceilings. */
  void enter(long pid) throws IOException {
    for (Path dir : dirs) {
      Path charge = dir.resolve("memory.move_charge_at_immigrate");
      if (Files.exists(charge)) {
        // Charge what it already holds to the group too (not only what it allocates from now).
        try {
          write(charge, "3");
        } catch (IOException notSupported) {
          // Kernels without charge moving: only new allocations count, still bounded.
        }
      }
      write(dir.resolve("cgroup.procs"), Long.toString(pid));
    }
  }

  /** CFS periods the group was throttled in so far; 0 without a group. */
  long throttledPeriods() {
    return stat("cpu.stat", "nr_throttled").orElse(0);
  }

  /** Processes the kernel killed at the group's memory limit so far; 0 without a group. */
  long oomKills() {
    return kind == Ceilings.CGROUP_V2
        ? stat("memory.events", "oom_kill").orElse(0)
        : stat("memory.oom_control", "oom_kill").orElse(0);
  }

  /** The memory the group's processes hold now, as the kernel charges it; empty without a group. */
  OptionalLong memoryUsed() {
    return single(kind == Ceilings.CGROUP_V2 ? "memory.current" : "memory.usage_in_bytes");
  }

  private OptionalLong single(String file) {
    for (Path dir : dirs) {
      Path f = dir.resolve(file);
      if (Files.exists(f)) {
        try {
          return OptionalLong.of(Long.parseLong(Files.readString(f).trim()));
        } catch (IOException | NumberFormatException unreadable) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }

  private OptionalLong stat(String file, String key) {
    for (Path dir : dirs) {
      Path f = dir.resolve(file);
      if (!Files.exists(f)) {
        continue;
      }
      try {
        for (String line : Files.readAllLines(f)) {
          String[] kv = line.trim().split("\\s+");
          if (kv.length == 2 && kv[0].equals(key)) {
            return OptionalLong.of(Long.parseLong(kv[1]));
          }
        }
      } catch (IOException | NumberFormatException unreadable) {
        return OptionalLong.empty();
      }
    }
    return OptionalLong.empty();
  }

  /** Deletes the group (its processes must have ended); whether it is gone. */
  boolean remove() {
    boolean all = true;
    for (int i = dirs.size() - 1; i >= 0; i--) {
      all &= removeDir(dirs.get(i));
    }
    return all;
  }
}
