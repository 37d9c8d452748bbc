package io.bulkhead.demo.deploy;

import io.bulkhead.config.ConfigException;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * One thing wrong with a deployment, found by {@link Deployment#check}: the file, the line and the
 * key to change, and why. {@link #toString()} is one line in the form {@link ConfigException} uses:
 *
 * <pre>
 * examples/deploy/k8s/api.yaml:31: spec.template.spec.containers[api].resources.limits.memory: ...
 * </pre>
 *
 * <p>This class is immutable.
 */
public final class DeploymentProblem {

  private final String file;
  private final int line; // 0: unknown
  private final String key;
  private final String problem;

  DeploymentProblem(String file, int line, String key, String problem) {
    this.file = Objects.requireNonNull(file, "file");
    this.line = line;
    this.key = Objects.requireNonNull(key, "key");
    this.problem = Objects.requireNonNull(problem, "problem");
  }

  /** The deployment file, as it was named to {@link Deployment#load}. */
  public String file() {
    return file;
  }

  /** The line (from 1) of the key, or of the container that lacks it; empty when unknown. */
  public OptionalInt line() {
    return line > 0 ? OptionalInt.of(line) : OptionalInt.empty();
  }

  /**
   * The key to change, as a dotted path inside its document, with list items by name: {@code
   * spec.template.spec.containers[api].resources.limits.memory}, {@code
   * services.reports.deploy.resources.limits.cpus}.
   */
  public String key() {
    return key;
  }

  /** The problem alone, without file, line and key. */
  public String problem() {
    return problem;
  }

  /** {@code file:line: key: problem}, on one line, with what came from the files escaped. */
  @Override
  public String toString() {
    return new ConfigException(file, line, key, problem).getMessage();
  }
}
