package io.bulkhead.demo.deploy;

import io.bulkhead.config.BudgetSpec;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.CompartmentSpec;
import io.bulkhead.config.Quantities;
import io.bulkhead.config.internal.Printable;
import io.bulkhead.config.internal.YamlTree;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link Deployment#check} found: a line for each container that runs compartments or a JVM
 * and for each database, and the problems, one line each naming the file, the line and the key to
 * change.
 *
 * <p>The rules (docs/sizing.md, "Deployments checked before they ship", says them for users):
 *
 * <ol>
 *   <li><b>Limits.</b> Every container has a memory limit and a CPU limit.
 *   <li><b>Room beside the heap.</b> The heap ({@code -Xmx}, else {@code -XX:MaxRAMPercentage} of
 *       the limit, else {@value #JVM_DEFAULT_MAX_RAM_PERCENTAGE}%) leaves at least {@link
 *       #MIN_NON_HEAP_SHARE} of the limit, and at least {@link #NON_HEAP_BASE_BYTES} plus a stack
 *       ({@code -Xss}, else {@link #DEFAULT_THREAD_STACK_BYTES}) for each of {@link #JVM_THREADS}
 *       JVM and server threads and each platform thread the container's compartments hold (a
 *       compartment's limit, a platform worker pool's workers). These thresholds are estimates for
 *       a small service; they catch a heap set to the whole limit, which gets containers killed.
 *   <li><b>CPU-bound calls and CPUs.</b> The limits of the {@code cpu-bound} compartments of a
 *       container add up to no more than its CPU limit rounded up, and {@code
 *       -XX:ActiveProcessorCount} is not above it either.
 *   <li><b>The fleet and the database.</b> Every instance that may run at once (replicas, an
 *       autoscaler's maximum, a rolling update's extra ones) times its compartments' limits on a
 *       database's budget, plus {@code superuser_reserved_connections} ({@value
 *       #POSTGRES_DEFAULT_SUPERUSER_RESERVED} by default), is at most its {@code max_connections}
 *       ({@value #POSTGRES_DEFAULT_MAX_CONNECTIONS} by default).
 *   <li><b>Names.</b> Every compartment a container names, and every budget a database names, is in
 *       the bulkhead file.
 * </ol>
 *
 * <p>This class is immutable.
 */
public final class DeploymentCheck {

  /**
   * The heap the JVM takes in a container when no option sets it: a quarter of the memory limit.
   */
  public static final double JVM_DEFAULT_MAX_RAM_PERCENTAGE = 25.0;

  /**
   * The share of the memory limit kept outside the heap, at least: the garbage collector's
   * remembered sets and card tables, and direct buffers, grow with the heap. It is the usual advice
   * of a heap at 75% of the container's memory, and what {@code demo processes} gives its JVMs.
   */
  public static final double MIN_NON_HEAP_SHARE = 0.25;

  /**
   * Memory outside the heap that does not depend on it, in bytes (64 MiB): class metadata
   * (metaspace) and the JIT's code cache of a small service after warm-up, some tens of MiB each.
   */
  public static final long NON_HEAP_BASE_BYTES = 64L << 20;

  /**
   * Threads a JVM runs besides those of the compartments: garbage-collector and JIT-compiler
   * threads, reference handling and the signal dispatcher, a server's acceptors, selectors and
   * schedulers.
   */
  public static final int JVM_THREADS = 30;

  /** A thread's stack when {@code -Xss} is not given: 1 MiB, the JVM's default on 64-bit Linux. */
  public static final long DEFAULT_THREAD_STACK_BYTES = 1L << 20;

  /** PostgreSQL's {@code max_connections} when the server's command does not set it. */
  public static final int POSTGRES_DEFAULT_MAX_CONNECTIONS = 100;

  /**
   * PostgreSQL's {@code superuser_reserved_connections} when not set: slots an application's role
   * can never take, kept for an administrator to get in when everything else is full.
   */
  public static final int POSTGRES_DEFAULT_SUPERUSER_RESERVED = 3;

  private static final double PERCENT = 100.0;

  private final List<String> summary;
  private final List<DeploymentProblem> problems;
  private final List<String> warnings;

  private DeploymentCheck(
      List<String> summary, List<DeploymentProblem> problems, List<String> warnings) {
    this.summary = List.copyOf(summary);
    this.problems = List.copyOf(problems);
    this.warnings = List.copyOf(warnings);
  }

  /**
   * One line for each container that runs compartments or sets a heap, and one for each database:
   * what was read and the arithmetic the rules did with it.
   */
  public List<String> summary() {
    return summary;
  }

  /** The problems, in file order; empty when the deployment passes. */
  public List<DeploymentProblem> problems() {
    return problems;
  }

  /**
   * Things the check could not hold against anything, one line each: a budget the deployed
   * compartments draw on with no database for it in the deployment, a compartment of the file that
   * no container runs.
   */
  public List<String> warnings() {
    return warnings;
  }

  /** Whether there are no problems. */
  public boolean passed() {
    return problems.isEmpty();
  }

  // ------------------------------------------------------------------------------------------------

  static DeploymentCheck of(BulkheadFile config, Deployment deployment) {
    Map<String, CompartmentSpec> byName = new LinkedHashMap<>();
    for (CompartmentSpec c : config.compartments()) {
      byName.put(c.name(), c);
    }
    Set<String> budgets = new LinkedHashSet<>();
    for (BudgetSpec b : config.budgets()) {
      budgets.add(b.name());
    }
    List<String> summary = new ArrayList<>();
    List<DeploymentProblem> problems = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Map<Container, List<CompartmentSpec>> runs = new LinkedHashMap<>();
    Set<String> deployed = new LinkedHashSet<>();

    for (Container c : deployment.containers()) {
      if (c.memory == null) {
        problems.add(
            new DeploymentProblem(
                c.file,
                c.line,
                c.memoryKey(),
                "no memory limit: the node's"
                    + " memory is the ceiling, and when it runs out the kernel picks what to kill; set one,"
                    + " with the heap below it"));
      }
      if (c.cpu == null) {
        problems.add(
            new DeploymentProblem(
                c.file,
                c.line,
                c.cpuKey(),
                "no CPU limit: a runaway thread"
                    + " can take every core of the node from the containers beside it"));
      }
      List<CompartmentSpec> specs = new ArrayList<>();
      if (c.compartments != null) {
        for (String name : c.compartments.value()) {
          CompartmentSpec spec = byName.get(name);
          if (spec == null) {
            problems.add(
                problem(
                    c.compartments,
                    "no compartment named "
                        + Printable.quote(name)
                        + " in "
                        + config.file()
                        + YamlTree.suggestion(name, byName.keySet())));
          } else {
            specs.add(spec);
            deployed.add(name);
          }
        }
      }
      runs.put(c, specs);
      boolean jvm = !specs.isEmpty() || c.jvm.setsHeap();
      if (!jvm) {
        continue;
      }
      StringBuilder line = new StringBuilder(c.file).append(": ").append(describe(c)).append(": ");
      line.append(specs.isEmpty() ? "runs no compartment" : "runs " + names(specs));
      if (c.cpu != null) {
        line.append(" on ").append(Quantities.formatNumber(c.cpu.value())).append(" CPU");
        checkCpu(c, specs, problems);
      }
      if (c.memory != null) {
        line.append("; ").append(checkMemory(c, specs, problems));
      }
      line.append("; ")
          .append(c.instances())
          .append(c.instances() == 1 ? " instance" : " instances")
          .append(" at most (")
          .append(c.instancesWhy)
          .append(')');
      summary.add(line.toString());
    }

    Set<String> withDatabase = new LinkedHashSet<>();
    for (Container db : deployment.containers()) {
      if (db.budget == null) {
        continue;
      }
      String budget = db.budget.value();
      if (!budgets.contains(budget)) {
        problems.add(
            problem(
                db.budget,
                "no budget named "
                    + Printable.quote(budget)
                    + " in "
                    + config.file()
                    + (budgets.isEmpty()
                        ? " (it declares none)"
                        : YamlTree.suggestion(budget, budgets))));
        continue;
      }
      withDatabase.add(budget);
      summary.add(checkFleet(db, budget, runs, problems));
    }

    Set<String> drawnOn = new LinkedHashSet<>();
    for (List<CompartmentSpec> specs : runs.values()) {
      for (CompartmentSpec s : specs) {
        s.budget().ifPresent(drawnOn::add);
      }
    }
    for (String budget : drawnOn) {
      if (!withDatabase.contains(budget)) {
        warnings.add(
            deployment.name()
                + ": budget '"
                + budget
                + "': no database in the deployment says "
                + ManifestReader.BUDGET
                + ": "
                + budget
                + ", so the fleet's connections were not held against"
                + " its max_connections");
      }
    }
    if (!deployed.isEmpty()) {
      for (CompartmentSpec s : config.compartments()) {
        if (!deployed.contains(s.name())) {
          warnings.add(
              deployment.name()
                  + ": compartment '"
                  + s.name()
                  + "' of "
                  + config.file()
                  + " runs in no container ("
                  + ManifestReader.COMPARTMENTS
                  + ")");
        }
      }
    }
    return new DeploymentCheck(summary, problems, warnings);
  }

  private static DeploymentProblem problem(Read<?> at, String why) {
    return new DeploymentProblem(at.file(), at.line(), at.key(), why);
  }

  private static String describe(Container c) {
    return c.kind
        + " "
        + Printable.shown(c.workload)
        + (c.compose || c.name.equals(c.workload) ? "" : ", container " + Printable.shown(c.name));
  }

  private static String names(List<CompartmentSpec> specs) {
    List<String> parts = new ArrayList<>();
    for (CompartmentSpec s : specs) {
      parts.add(s.name() + " (" + "limit " + s.limit() + (s.cpuBound() ? ", cpu-bound" : "") + ")");
    }
    return String.join(", ", parts);
  }

  /** Rule 3: CPU-bound calls against the CPUs the JVM sees in the container. */
  private static void checkCpu(
      Container c, List<CompartmentSpec> specs, List<DeploymentProblem> problems) {
    long cores = (long) Math.ceil(c.cpu.value());
    long cpuBound = 0;
    List<String> parts = new ArrayList<>();
    for (CompartmentSpec s : specs) {
      if (s.cpuBound()) {
        cpuBound += s.limit();
        parts.add(s.name() + " " + s.limit());
      }
    }
    if (cpuBound > cores) {
      problems.add(
          problem(
              c.cpu,
              Printable.shown(c.cpu.text())
                  + " runs "
                  + cpuBound
                  + " cpu-bound calls at"
                  + " once ("
                  + String.join(" + ", parts)
                  + ") on "
                  + cores
                  + " processor"
                  + (cores == 1 ? "" : "s")
                  + ": "
                  + (cpuBound - cores)
                  + " of them wait for a core while holding their slots, and the quota"
                  + " throttles the container's other threads with them; give it "
                  + cpuBound
                  + " CPUs or those compartments "
                  + cores
                  + " slot"
                  + (cores == 1 ? "" : "s")
                  + " between them"));
    }
    if (c.jvm.processors != null && c.jvm.processors.value() > cores) {
      problems.add(
          problem(
              c.jvm.processors,
              c.jvm.processors.text()
                  + " is above the container's CPU limit"
                  + " of "
                  + Printable.shown(c.cpu.text())
                  + ": the JVM sizes its GC, JIT and common-pool threads"
                  + " for "
                  + c.jvm.processors.value()
                  + " processors and the quota throttles them"));
    }
  }

  /** Rule 2: the room the heap leaves below the memory limit. Returns the summary's part. */
  private static String checkMemory(
      Container c, List<CompartmentSpec> specs, List<DeploymentProblem> problems) {
    long limit = c.memory.value();
    long heap;
    String from;
    if (c.jvm.heap != null) {
      heap = c.jvm.heap.value();
      from = Printable.shown(c.jvm.heap.text()) + " in " + c.jvm.heap.key();
    } else if (c.jvm.ramPercentage != null) {
      heap = (long) (limit * c.jvm.ramPercentage.value() / PERCENT);
      from = Printable.shown(c.jvm.ramPercentage.text()) + " in " + c.jvm.ramPercentage.key();
    } else {
      heap = (long) (limit * JVM_DEFAULT_MAX_RAM_PERCENTAGE / PERCENT);
      from = "the JVM's default, " + Quantities.formatNumber(JVM_DEFAULT_MAX_RAM_PERCENTAGE) + "%";
    }
    long threads = JVM_THREADS;
    for (CompartmentSpec s : specs) {
      threads += s.workerPool() && s.virtualThreads() ? 0 : s.limit();
    }
    long stack = c.jvm.stack != null ? c.jvm.stack.value() : DEFAULT_THREAD_STACK_BYTES;
    long stacks = saturatedMultiply(threads, stack);
    long fixed = saturatedAdd(NON_HEAP_BASE_BYTES, stacks);
    long share = (long) Math.ceil(limit * MIN_NON_HEAP_SHARE);
    long needed = Math.max(share, fixed);
    long room = limit - heap;
    String memory = ResourceQuantities.formatBytes(limit);
    if (room < needed) {
      String leaves =
          room <= 0
              ? "is at least the " + memory + " limit"
              : "leaves " + ResourceQuantities.formatBytes(room) + " of the " + memory + " limit";
      String fix =
          limit > needed
              ? "lower the heap to "
                  + ResourceQuantities.formatBytes(limit - needed)
                  + " or raise the limit"
              : "raise the limit";
      problems.add(
          problem(
              c.memory,
              "the heap of "
                  + ResourceQuantities.formatBytes(heap)
                  + " ("
                  + from
                  + ") "
                  + leaves
                  + "; the JVM needs "
                  + ResourceQuantities.formatBytes(needed)
                  + " beside its heap ("
                  + needWhy(share, fixed, threads, stack)
                  + "): "
                  + fix));
    }
    String source =
        c.jvm.heap != null
            ? c.jvm.heap.text()
            : c.jvm.ramPercentage != null ? c.jvm.ramPercentage.text() : "the JVM's default";
    return memory
        + ": heap "
        + ResourceQuantities.formatBytes(heap)
        + " ("
        + Printable.shown(source)
        + "), "
        + (room > 0 ? ResourceQuantities.formatBytes(room) : "nothing")
        + " beside it, "
        + ResourceQuantities.formatBytes(needed)
        + " needed";
  }

  private static String needWhy(long share, long fixed, long threads, long stack) {
    String stacks =
        ResourceQuantities.formatBytes(NON_HEAP_BASE_BYTES)
            + " of metadata and code + "
            + threads
            + " thread stacks of "
            + ResourceQuantities.formatBytes(stack);
    return share >= fixed ? "a quarter of the limit, more than " + stacks : stacks;
  }

  /**
   * Rule 4: every instance's pools on the budget, plus the reserved connections, against
   * max_connections.
   */
  private static String checkFleet(
      Container db,
      String budget,
      Map<Container, List<CompartmentSpec>> runs,
      List<DeploymentProblem> problems) {
    int max =
        db.maxConnections != null ? db.maxConnections.value() : POSTGRES_DEFAULT_MAX_CONNECTIONS;
    int reserved = db.reserved != null ? db.reserved.value() : POSTGRES_DEFAULT_SUPERUSER_RESERVED;
    long total = reserved;
    List<String> parts = new ArrayList<>();
    List<String> why = new ArrayList<>();
    for (Map.Entry<Container, List<CompartmentSpec>> e : runs.entrySet()) {
      Container c = e.getKey();
      long perInstance = 0;
      for (CompartmentSpec s : e.getValue()) {
        if (s.budget().filter(budget::equals).isPresent()) {
          perInstance += s.limit();
        }
      }
      if (perInstance == 0 || c == db) {
        continue;
      }
      total = saturatedAdd(total, saturatedMultiply(c.instances(), perInstance));
      parts.add(Printable.shown(c.workload) + " " + c.instances() + " x " + perInstance);
      why.add(Printable.shown(c.workload) + ": " + c.instancesWhy);
    }
    parts.add(reserved + " reserved");
    String maxText =
        "max_connections " + max + (db.maxConnections == null ? " (PostgreSQL's default)" : "");
    String sum = String.join(" + ", parts);
    if (total > max) {
      String key =
          db.maxConnections != null
              ? db.maxConnections.key()
              : db.compose ? db.path + ".command" : db.path + ".args";
      int line = db.maxConnections != null ? db.maxConnections.line() : db.line;
      problems.add(
          new DeploymentProblem(
              db.file,
              line,
              key,
              maxText
                  + " is below what the fleet may open"
                  + " on budget '"
                  + budget
                  + "': "
                  + sum
                  + " = "
                  + total
                  + " ("
                  + String.join("; ", why)
                  + "): raise it, or lower"
                  + " the replicas or the limits"));
    }
    return db.file
        + ": "
        + describe(db)
        + ": budget '"
        + budget
        + "': "
        + maxText
        + (total > max ? " < " : " >= ")
        + total
        + " the fleet may open: "
        + sum;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private static long saturatedMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return hi != 0 || lo < 0 ? Long.MAX_VALUE : lo;
  }
}
