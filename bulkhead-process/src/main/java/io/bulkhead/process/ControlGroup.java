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
 * two supervisors on one machine never share one. It also caps the threads of all its processes
 * together ({@code pids.max}, where the {@code pids} controller is there). Every incarnation of the
 * worker enters the same group, and whatever the worker starts is born in it: {@link #killAll} ends
 * them all (cgroup v2: {@code cgroup.kill}; v1: kills every process listed in {@code cgroup.procs}
 * until none is left), and the group is removed when the worker is closed.
 */
final class ControlGroup {

  /** The CFS period, the kernel's default: the quota is this times the CPUs granted. */
  private static final long PERIOD_MICROS = 100_000;

  /** The smallest quota the kernel accepts. */
  private static final long LEAST_QUOTA_MICROS = 1_000;

  private static final Path ROOT = Path.of("/sys/fs/cgroup");

  /** How long killing a group's processes waits for the kernel to end the last one. */
  private static final long KILL_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The pause between two looks at a group whose killed processes have not all ended yet. */
  private static final long KILL_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

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

  /** The settings of a group: what it grants. */
  record Limits(double cpus, long memoryBytes, int maxThreads) {}

  /** The prefix of every group this process creates. */
  static String prefix() {
    return "bulkhead-" + ProcessHandle.current().pid() + "-";
  }

  /**
   * A group for worker {@code name} granting {@code cpus} CPUs and {@code memoryBytes} without
   * swap, or one of kind {@link Ceilings#JVM} when the kernel's ceilings are out of reach or not
   * wanted.
   */
  static ControlGroup create(String name, Limits limits, boolean kernelWanted) {
    if (kernelWanted) {
      List<Path> made = new ArrayList<>();
      try {
        return v1(name, limits, made);
      } catch (IOException | RuntimeException v1Refused) {
        removeAll(made);
        made.clear();
      }
      try {
        return v2(name, limits, made);
      } catch (IOException | RuntimeException v2Refused) {
        removeAll(made);
      }
    }
    return new ControlGroup(Ceilings.JVM, List.of(), limits.cpus(), limits.memoryBytes());
  }

  private static ControlGroup v1(String name, Limits limits, List<Path> made) throws IOException {
    Path cpuDir = v1Dir("cpu", name);
    Path memoryDir = v1Dir("memory", name);
    Files.createDirectory(cpuDir);
    made.add(cpuDir);
    Files.createDirectory(memoryDir);
    made.add(memoryDir);
    write(cpuDir.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_MICROS));
    write(cpuDir.resolve("cpu.cfs_quota_us"), Long.toString(quotaMicros(limits.cpus())));
    write(memoryDir.resolve("memory.limit_in_bytes"), Long.toString(limits.memoryBytes()));
    Path memsw = memoryDir.resolve("memory.memsw.limit_in_bytes");
    if (Files.exists(memsw)) {
      write(memsw, Long.toString(limits.memoryBytes())); // memory plus swap = memory: no swap
    }
    if (Files.isDirectory(ROOT.resolve("pids"))) {
      Path pidsDir = v1Dir("pids", name);
      Files.createDirectory(pidsDir);
      made.add(pidsDir);
      write(pidsDir.resolve("pids.max"), Integer.toString(limits.maxThreads()));
    }
    return new ControlGroup(Ceilings.CGROUP_V1, made, limits.cpus(), limits.memoryBytes());
  }

  private static Path v1Dir(String controller, String name) throws IOException {
    return ROOT.resolve(controller).resolve(ownPath(controller)).resolve(prefix() + name);
  }

  private static ControlGroup v2(String name, Limits limits, List<Path> made) throws IOException {
    if (!Files.exists(ROOT.resolve("cgroup.controllers"))) {
      throw new IOException("no cgroup v2 hierarchy at " + ROOT);
    }
    Path parent = ROOT.resolve(ownPath(""));
    List<String> available =
        List.of(Files.readString(parent.resolve("cgroup.controllers")).trim().split("\\s+"));
    List<String> delegated =
        List.of(Files.readString(parent.resolve("cgroup.subtree_control")).trim().split("\\s+"));
    boolean pids = available.contains("pids");
    if (!delegated.containsAll(
        pids ? List.of("cpu", "memory", "pids") : List.of("cpu", "memory"))) {
      write(parent.resolve("cgroup.subtree_control"), pids ? "+cpu +memory +pids" : "+cpu +memory");
    }
    Path dir = parent.resolve(prefix() + name);
    Files.createDirectory(dir);
    made.add(dir);
    write(dir.resolve("cpu.max"), quotaMicros(limits.cpus()) + " " + PERIOD_MICROS);
    write(dir.resolve("memory.max"), Long.toString(limits.memoryBytes()));
    write(dir.resolve("memory.swap.max"), "0");
    if (pids) {
      write(dir.resolve("pids.max"), Integer.toString(limits.maxThreads()));
    }
    return new ControlGroup(Ceilings.CGROUP_V2, made, limits.cpus(), limits.memoryBytes());
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

  /** Removes a group without processes; false when the kernel refuses (it still has some). */
  private static boolean removeDir(Path dir) {
    try {
      Files.deleteIfExists(dir);
      return true;
    } catch (IOException busy) {
      return false;
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

  /**
   * Kills every process in the group and waits (bounded) until the kernel lists none: those the
   * worker started and left behind too, whoever their parent is now. Under JVM ceilings there is no
   * group and this does nothing. Returns the processes still listed when the patience ran out
   * (empty when all ended).
   *
   * <p>A process may fork between the reading of the list and the kill: its child is in the group
   * and is found by the next reading, so the loop ends once a reading finds nobody (the threads
   * ceiling bounds how many a fork bomb can add per round). Under cgroup v2 {@code cgroup.kill}
   * does the same in the kernel, atomically.
   */
  List<Long> killAll() {
    if (dirs.isEmpty()) {
      return List.of();
    }
    Path kill = dirs.get(0).resolve("cgroup.kill");
    boolean killedByKernel = false;
    if (kind == Ceilings.CGROUP_V2 && Files.exists(kill)) {
      try {
        write(kill, "1");
        killedByKernel = true;
      } catch (IOException refused) {
        // An older kernel without the file's support: kill one by one below.
      }
    }
    long deadline = System.nanoTime() + KILL_PATIENCE_NANOS;
    while (true) {
      List<Long> members = members();
      if (members.isEmpty()) {
        return members;
      }
      if (!killedByKernel) {
        for (long pid : members) {
          ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
      if (System.nanoTime() - deadline > 0) {
        return members;
      }
      // Killed processes leave the list as they exit; the kernel gives no event to wait for (v1).
      LockSupport.parkNanos(KILL_RECHECK_NANOS);
    }
  }

  /** The processes listed in the group (in any of its hierarchies). */
  private List<Long> members() {
    List<Long> pids = new ArrayList<>();
    for (Path dir : dirs) {
      try {
        for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
          if (!line.isBlank()) {
            Long pid = Long.valueOf(line.trim());
            if (!pids.contains(pid)) {
              pids.add(pid);
            }
          }
        }
      } catch (IOException | NumberFormatException gone) {
        // A group already removed lists nobody.
      }
    }
    return pids;
  }

  /**
   * Kills whatever is left in the group, then deletes it; whether it is gone. Every process of the
   * group has ended when this returns true.
   */
  boolean remove() {
    List<Long> left = killAll();
    boolean all = left.isEmpty();
    for (int i = dirs.size() - 1; i >= 0; i--) {
      all &= removeDir(dirs.get(i));
    }
    return all;
  }
}
