package io.bulkhead.demo;

import io.bulkhead.config.BudgetSpec;
import io.bulkhead.config.BudgetUse;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.CompartmentSpec;
import io.bulkhead.config.ConfigException;
import io.bulkhead.config.Quantities;
import io.bulkhead.demo.deploy.Deployment;
import io.bulkhead.demo.deploy.DeploymentCheck;
import io.bulkhead.demo.deploy.DeploymentProblem;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code check FILE}: loads a configuration file with bulkhead-config, prints the sizing of every
 * compartment and how each budget is used, and says by its exit code whether the file can be
 * deployed.
 *
 * <pre>
 * compartment  budget    rate  latency  need  headroom  limit  share
 * checkout     postgres  40/s  50ms     2     x3        6      60%
 * reports      postgres  2/s   1.5s     3     x4/3      4      40%
 *
 * budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10
 * </pre>
 *
 * <p>With {@code --deploy PATH} (a Compose file, a file of Kubernetes manifests or a directory of
 * them; each one deployment, repeatable) it holds the deployments against the file with {@link
 * Deployment#check}: a line per container and database, then one line per problem naming the file,
 * the line and the key. The rules live in bulkhead-config, next to the budgets they extend; this
 * command only prints them and picks the exit code.
 */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    header =
        "Check a file of budgets and compartments before deploying it (the sizing of the "
            + "checkout-vs-reports outage, as a file).",
    description = {
      "Prints every compartment's budget, expected rate, latency, need (rate x latency), headroom, "
          + "limit and share of its budget, and whether each budget holds its compartments.",
      "With --deploy, also holds Docker Compose files and Kubernetes manifests against the file: "
          + "memory and CPU limits on every container, room beside the JVM's heap, cpu-bound "
          + "compartments within the CPU limit, and every replica's pools plus the reserve within the "
          + "database's max_connections; one line per problem naming file, line and key.",
      "Exit codes: 0 every budget holds (and every deployment passes); 1 a budget is over-subscribed "
          + "or a deployment has problems; 2 a file cannot be read or is not valid (one line naming "
          + "file, line and key)."
    })
final class CheckCommand implements Callable<Integer> {

  /** Every budget holds its compartments. */
  static final int OK = 0;

  /** At least one budget is over-subscribed; the table is still printed. */
  static final int OVER_SUBSCRIBED = 1;

  /** The file could not be read or is not a valid configuration. */
  static final int INVALID = 2;

  @Spec private CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "FILE",
      description = "A YAML file of budgets and compartments, e.g. examples/checkout-reports.yml.")
  Path file;

  @Option(
      names = "--deploy",
      paramLabel = "PATH",
      description =
          "A deployment to hold against FILE: a docker-compose.yml, a file of Kubernetes "
              + "manifests, or a directory of them (its .yaml and .yml files). Repeat for several "
              + "deployments; each is checked on its own, e.g. --deploy examples/deploy/docker-compose.yml "
              + "--deploy examples/deploy/k8s/.")
  List<Path> deployments = new ArrayList<>();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      BulkheadFile loaded;
      List<DeploymentCheck> checks = new ArrayList<>();
      try {
        loaded = BulkheadFile.load(file);
        List<Deployment> read = new ArrayList<>();
        for (Path path : deployments) {
          read.add(Deployment.load(path));
        }
        for (Deployment d : read) {
          checks.add(d.check(loaded));
        }
      } catch (ConfigException e) {
        // Already one clean line naming file, line and key; a long value can still make it wider
        // than a terminal line, so it is cut like every other error line of the command line.
        err.println(Main.oneLine(e.getMessage(), Main.LONGEST_LINE));
        return INVALID;
      }
      out.print(render(loaded));
      boolean over = loaded.budgetUse().stream().anyMatch(BudgetUse::overSubscribed);
      for (DeploymentCheck check : checks) {
        out.print(render(check));
        over |= !check.passed();
      }
      return over ? OVER_SUBSCRIBED : OK;
    } finally {
      out.flush();
      err.flush();
    }
  }

  /** The report: the table, then one line per budget, then any warnings. */
  static String render(BulkheadFile file) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "compartment", "budget", "rate", "latency", "need", "headroom", "limit", "share"
        });
    boolean givenWithNeed = false;
    for (CompartmentSpec c : file.compartments()) {
      String headroom;
      if (c.headroom().isPresent()) {
        headroom = c.headroom().get().toString();
      } else if (c.effectiveHeadroom().isPresent()) {
        headroom = "(x" + Quantities.formatNumber(c.effectiveHeadroom().getAsDouble()) + ")";
        givenWithNeed = true;
      } else {
        headroom = "-";
      }
      OptionalDouble need = c.need();
      rows.add(
          new String[] {
            c.workerPool() ? c.name() + " (workers)" : c.name(),
            c.budget().orElse("-"),
            c.rate().isPresent() ? Quantities.formatRate(c.rate().getAsDouble()) : "-",
            c.latency().map(Quantities::formatDuration).orElse("-"),
            need.isPresent() ? Quantities.formatNumber(need.getAsDouble()) : "-",
            headroom,
            Integer.toString(c.limit()),
            share(file, c)
          });
    }
    StringBuilder sb = new StringBuilder();
    long pools = file.compartments().stream().filter(CompartmentSpec::workerPool).count();
    long compartments = file.compartments().size() - pools;
    int budgets = file.budgets().size();
    sb.append(file.file()).append(": ").append(count(compartments, "compartment"));
    if (pools > 0) {
      sb.append(", ").append(count(pools, "worker pool"));
    }
    sb.append(", ").append(count(budgets, "budget")).append("\n\n");
    sb.append(table(rows));
    if (givenWithNeed) {
      sb.append("(xN): the limit is given in the file; N = limit / need\n");
    }
    if (!file.budgetUse().isEmpty()) {
      sb.append('\n');
      for (BudgetUse use : file.budgetUse()) {
        sb.append(use.describe()).append('\n');
      }
    }
    for (String w : file.warnings()) {
      sb.append("warning: ").append(w).append('\n');
    }
    return sb.toString();
  }

  /** A deployment's check: its summary lines, warnings, then one line per problem. */
  static String render(DeploymentCheck check) {
    StringBuilder sb = new StringBuilder("\n");
    for (String line : check.summary()) {
      sb.append(Main.oneLine(line, Integer.MAX_VALUE)).append('\n');
    }
    for (String w : check.warnings()) {
      sb.append("warning: ").append(Main.oneLine(w, Integer.MAX_VALUE)).append('\n');
    }
    if (!check.problems().isEmpty()) {
      sb.append('\n');
    }
    for (DeploymentProblem p : check.problems()) {
      sb.append(p).append('\n');
    }
    return sb.toString();
  }

  private static String count(long n, String what) {
    return n + " " + what + (n == 1 ? "" : "s");
  }

  private static String share(BulkheadFile file, CompartmentSpec c) {
    if (c.budget().isEmpty()) {
      return "-";
    }
    int capacity =
        file.budgets().stream()
            .filter(b -> b.name().equals(c.budget().get()))
            .findFirst()
            .map(BudgetSpec::capacity)
            .orElseThrow();
    return Math.round(100.0 * c.limit() / capacity) + "%";
  }

  /** Left-aligned columns, two spaces apart, no trailing spaces. */
  private static String table(List<String[]> rows) {
    int columns = rows.get(0).length;
    int[] width = new int[columns];
    for (String[] row : rows) {
      for (int i = 0; i < columns; i++) {
        width[i] = Math.max(width[i], row[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(row[i]);
        if (i < columns - 1) {
          line.append(" ".repeat(width[i] - row[i].length() + 2));
        }
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
    return sb.toString();
  }
}
