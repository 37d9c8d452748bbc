package io.bulkhead.scenarios;

import java.util.List;
import java.util.Objects;

/**
 * One mode's run.
 *
 * @param mode shared or bulkhead
 * @param load what the load generator measured
 * @param upstreamMaxConnections the most connections the upstream saw open at once
 * @param upstreamRequests how many requests reached the upstream
 * @param llmLimit how the llm compartment's adaptive limit moved, or null for a static limit (and
 *     in shared mode)
 */
public record ModeResult(
    Mode mode,
    LoadResult load,
    int upstreamMaxConnections,
    int upstreamRequests,
    LimitTrace llmLimit) {

  /** A run without an adaptive limit. */
  public ModeResult(Mode mode, LoadResult load, int upstreamMaxConnections, int upstreamRequests) {
    this(mode, load, upstreamMaxConnections, upstreamRequests, null);
  }

  /**
   * An adaptive limit over a run: read from the compartment while the load ran.
   *
   * @param controller the controller's name
   * @param min the lowest limit
   * @param max the highest limit
   * @param changes how often the limit moved during the run
   * @param lastMove why it last moved, empty if it did not
   * @param points the limit when the load started, at each move seen, and when the load ended
   */
  public record LimitTrace(
      String controller, int min, int max, long changes, String lastMove, List<Point> points) {
    public LimitTrace {
      Objects.requireNonNull(controller, "controller");
      Objects.requireNonNull(lastMove, "lastMove");
      points = List.copyOf(points);
    }
  }

  /**
   * The limit at one moment.
   *
   * @param atMillis milliseconds since the load started
   * @param limit the limit then
   */
  public record Point(long atMillis, int limit) {}
}
