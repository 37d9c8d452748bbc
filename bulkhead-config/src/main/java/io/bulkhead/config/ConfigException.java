package io.bulkhead.config;

import io.bulkhead.config.internal.Printable;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * A configuration file that cannot be used, with where and why: the file, the line, the key (as a
 * dotted path such as {@code compartments.reports.latency}) and the problem.
 *
 * <p>{@link #getMessage()} is one line in the form compilers use, so editors can jump to it:
 *
 * <pre>
 * examples/checkout-reports.yml:14: compartments.reports.latncy: unknown key (did you mean 'latency'?)
 * </pre>
 */
public final class ConfigException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String file;
  private final int line; // 0: unknown
  private final String key; // null: not about one key
  private final String problem;

  /**
   * A problem at {@code line} (0: not about one line) of {@code file}, at {@code key} (a dotted
   * path; null when it is not about one key).
   */
  public ConfigException(String file, int line, @Nullable String key, String problem) {
    super(format(file, line, key, problem));
    this.file = Objects.requireNonNull(file, "file");
    this.line = line;
    this.key = key;
    this.problem = Objects.requireNonNull(problem, "problem");
  }

  /** The same, caused by {@code cause}. */
  public ConfigException(
      String file, int line, @Nullable String key, String problem, Throwable cause) {
    this(file, line, key, problem);
    initCause(cause);
  }

  /** How much of the file's name and of the key a message shows; the problem is kept whole. */
  private static final int SHOWN_NAME = 120;

  /**
   * The one line: what came from the file or the command line (the file's name, the key) is escaped
   * and cut short, and so is anything the problem quotes (see {@code Printable}), so that no
   * character of the input can break the line or reach the terminal as a control sequence.
   */
  private static String format(String file, int line, String key, String problem) {
    StringBuilder sb = new StringBuilder(Printable.shorten(file, SHOWN_NAME));
    if (line > 0) {
      sb.append(':').append(line);
    }
    sb.append(": ");
    if (key != null) {
      sb.append(Printable.shorten(key, SHOWN_NAME)).append(": ");
    }
    return sb.append(Printable.escape(problem)).toString();
  }

  /** The file, as it was named to the loader. */
  public String file() {
    return file;
  }

  /** The line (from 1) the problem is on; empty when it is about the file as a whole. */
  public OptionalInt line() {
    return line > 0 ? OptionalInt.of(line) : OptionalInt.empty();
  }

  /** The key, as a dotted path; empty for problems not tied to one key (YAML syntax, say). */
  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  /** The problem alone, without file, line and key. */
  public String problem() {
    return problem;
  }
}
