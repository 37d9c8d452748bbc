package io.bulkhead.scenarios;

import java.time.Instant;
import java.util.List;

/**
 * Both runs of the experiment and the conditions they ran in.
 *
 * @param settings the experiment's numbers
 * @param shared the run in shared mode
 * @param bulkhead the run in bulkhead mode
 * @param startedAt when the experiment started
 * @param loadAverageBefore the machine's one-minute load average before the runs (negative if the
 *     platform does not report it)
 * @param loadAverageAfter the same after the runs
 * @param processors available processors
 * @param javaVersion the JVM that ran it
 * @param ports the loopback ports the experiment listened on (all closed again when it returned)
 */
public record ExperimentResult(
    DemoSettings settings,
    ModeResult shared,
    ModeResult bulkhead,
    Instant startedAt,
    double loadAverageBefore,
    double loadAverageAfter,
    int processors,
    String javaVersion,
    List<Integer> ports) {

  public ExperimentResult {
    ports = List.copyOf(ports);
  }
}
