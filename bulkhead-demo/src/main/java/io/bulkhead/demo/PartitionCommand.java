package io.bulkhead.demo;

import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code partition}: shared-vs-split slots. The same slots laid out two ways: one compartment
 * shared by reports and payments, or split between them. Report calls hang on a gate while they
 * hold their slots; payment calls answer at once. Only the counts matter: who gets in.
 */
@Command(
    name = "partition",
    mixinStandardHelpOptions = true,
    header = "Shared-vs-split slots: the same slots, shared or split.",
    description =
        "--slots shared by reports and payments, versus split --reports-share / the "
            + "rest. Report calls hang while payment calls answer at once; prints who was accepted "
            + "and rejected.")
final class PartitionCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(
      names = "--slots",
      defaultValue = "7",
      paramLabel = "N",
      description = "Total slots. Default: ${DEFAULT-VALUE}.")
  int slots;

  @Option(
      names = "--reports-share",
      defaultValue = "3",
      paramLabel = "N",
      description =
          "Slots for reports when split; payments get the rest. Default: ${DEFAULT-VALUE}.")
  int reportsShare;

  @Option(
      names = "--reports",
      defaultValue = "10",
      paramLabel = "N",
      description = "Report calls, each hanging until the end. Default: ${DEFAULT-VALUE}.")
  int reports;

  @Option(
      names = "--payments",
      defaultValue = "4",
      paramLabel = "N",
      description = "Payment calls, answering at once. Default: ${DEFAULT-VALUE}.")
  int payments;

  @Override
  public Integer call() {
    if (slots < 2) {
      throw new ParameterException(
          spec.commandLine(), "--slots must be at least 2 to split but was " + slots);
    }
    if (reportsShare < 1 || reportsShare >= slots) {
      throw new ParameterException(
          spec.commandLine(),
          "--reports-share must be between 1 and "
              + (slots - 1)
              + " so that both get a slot, but was "
              + reportsShare);
    }
    checkCalls("--reports", reports);
    checkCalls("--payments", payments);
    PrintWriter out = spec.commandLine().getOut();

    Bulkhead shared = Bulkhead.builder("shared").limit(slots).build();
    print(out, "One shared compartment of " + slots, scenario(shared, shared));

    // The split draws on one budget of the same size: the two shares cannot add up to more.
    Budget budget = Budget.of("slots", slots);
    Bulkhead reportsBox = Bulkhead.builder("reports").limit(reportsShare).budget(budget).build();
    Bulkhead paymentsBox =
        Bulkhead.builder("payments").limit(slots - reportsShare).budget(budget).build();
    print(
        out,
        "Two compartments: reports " + reportsShare + ", payments " + (slots - reportsShare),
        scenario(reportsBox, paymentsBox));
    out.flush();
    return 0;
  }

  /**
   * The most calls of one kind: each is a future held until the end of the run, and a few hundred
   * already show who gets the slots; a count near {@code int}'s max would not fit in memory.
   */
  static final int MOST_CALLS = 10_000;

  private void checkCalls(String option, int calls) {
    if (calls < 0 || calls > MOST_CALLS) {
      throw new ParameterException(
          spec.commandLine(), option + " must be from 0 to " + MOST_CALLS + " but was " + calls);
    }
  }

  /** Returns {reports accepted, reports rejected, payments accepted, payments rejected}. */
  private int[] scenario(Bulkhead reportsBox, Bulkhead paymentsBox) {
    CompletableFuture<String> gate = new CompletableFuture<>();
    List<CompletableFuture<String>> reportCalls = new ArrayList<>();
    for (int i = 0; i < reports; i++) {
      reportCalls.add(reportsBox.submit(() -> gate)); // hangs, holding its slot
    }
    List<CompletableFuture<String>> paymentCalls = new ArrayList<>();
    for (int i = 0; i < payments; i++) {
      paymentCalls.add(paymentsBox.submit(() -> CompletableFuture.completedFuture("paid")));
    }
    gate.complete("report"); // let the hung reports finish so the slots come back
    int reportsRejected = rejected(reportCalls);
    int paymentsRejected = rejected(paymentCalls);
    return new int[] {
      reports - reportsRejected, reportsRejected, payments - paymentsRejected, paymentsRejected
    };
  }

  private static int rejected(List<CompletableFuture<String>> calls) {
    int n = 0;
    for (CompletableFuture<String> call : calls) {
      if (call.handle((v, e) -> e instanceof BulkheadFullException).join()) {
        n++;
      }
    }
    return n;
  }

  private void print(PrintWriter out, String title, int[] counts) {
    out.println(title);
    out.println(
        "  reports : sent " + reports + ", accepted " + counts[0] + ", rejected " + counts[1]);
    out.println(
        "  payments: sent " + payments + ", accepted " + counts[2] + ", rejected " + counts[3]);
  }
}
