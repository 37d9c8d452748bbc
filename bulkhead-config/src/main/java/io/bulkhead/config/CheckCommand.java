package io.bulkhead.config;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * The {@code check FILE} command: loads a configuration file, prints the sizing of every compartment
 * (budget, expected rate, latency, need, headroom, limit, share of the budget) and how each budget is
 * used, and says by its exit code whether the file can be deployed.
 *
 * <pre>
 * compartment  budget    rate  latency  need  headroom  limit  share
 * checkout     postgres  40/s  50ms     2     x3        6      60%
 * reports      postgres  2/s   1.5s     3     x4/3      4      40%
 *
 * budget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10
 * </pre>
 *
 * <p>Exit codes: {@link #OK}; {@link #OVER_SUBSCRIBED} when a budget's compartments together exceed
 * its capacity (the table is still printed); {@link #INVALID} when the file cannot be read or is not a
 * valid configuration, with one line on the error stream naming the file, line and key.
 */
public final class CheckCommand {

  /** Every budget holds its compartments. */
  public static final int OK = 0;
  /** At least one budget is over-subscribed. */
  public static final int OVER_SUBSCRIBED = 1;
  /** The file could not be read or is not a valid configuration. */
  public static final int INVALID = 2;

  private CheckCommand() {}

  /** Checks {@code file}, printing the table to {@code out} and errors to {@code err}. */
  public static int run(Path file, PrintWriter out, PrintWriter err) {
    try {
      return check(file, out, err);
    } finally {
      out.flush();
      err.flush();
    }
  }

  private static int check(Path file, PrintWriter out, PrintWriter err) {
    Objects.requireNonNull(file, "file");
    BulkheadFile loaded;
    try {
      loaded = BulkheadFile.load(file);
    } catch (ConfigException e) {
      err.println(e.getMessage());
      return INVALID;
    }
    out.print(render(loaded));
    boolean over = loaded.budgetUse().stream().anyMatch(BudgetUse::overSubscribed);
    return over ? OVER_SUBSCRIBED : OK;
  }

  /** The report {@link #run} prints: the table, then one line per budget, then any warnings. */
  public static String render(BulkheadFile file) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"compartment", "budget", "rate", "latency", "need", "headroom", "limit",
        "share"});
    boolean givenWithNeed = false;
    for (CompartmentSpec c : file.compartments()) {
      String headroom;
      if (c.headroom().isPresent()) {
        headroom = c.headroom().get().toString();
      } else if (c.effectiveHeadroom().isPresent()) {
        headroom = "(x" + Quantities.number(c.effectiveHeadroom().getAsDouble()) + ")";
        givenWithNeed = true;
      } else {
        headroom = "-";
      }
      OptionalDouble need = c.need();
      rows.add(new String[] {
          c.workerPool() ? c.name() + " (workers)" : c.name(),
          c.budget().orElse("-"),
          c.rate().isPresent() ? Quantities.rate(c.rate().getAsDouble()) : "-",
          c.latency().map(Quantities::duration).orElse("-"),
          need.isPresent() ? Quantities.number(need.getAsDouble()) : "-",
          headroom,
          Integer.toString(c.limit()),
          share(file, c)});
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

  private static String count(long n, String what) {
    return n + " " + what + (n == 1 ? "" : "s");
  }

  private static String share(BulkheadFile file, CompartmentSpec c) {
    if (c.budget().isEmpty()) {
      return "-";
    }
    int capacity = file.budgets().stream().filter(b -> b.name().equals(c.budget().get()))
        .findFirst().orElseThrow().capacity();
    return Math.round(100.0 * c.limit() / capacity) + "%";
  }

  /** Left-aligned columns, two spaces apart, no trailing spaces. */
  static String table(List<String[]> rows) {
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
