package io.bulkhead.demo.deploy;

import io.bulkhead.config.Quantities;
import io.bulkhead.config.internal.Printable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The memory and CPU quantities of the tools a deployment file belongs to, read the way each tool
 * reads them, since the same text means different things: {@code 512M} is 512,000,000 bytes to
 * Kubernetes and 512 MiB to Docker, and {@code 500m} is half a CPU to Kubernetes but half a byte of
 * memory. These are foreign grammars; the file's own durations and rates are {@link Quantities}.
 *
 * <p>Every parser throws {@link IllegalArgumentException} with one line that quotes the value and
 * shows the accepted forms; the caller puts the file and the key in front.
 */
final class ResourceQuantities {

  private static final long KIB = 1L << 10;
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;

  /**
   * Kubernetes: a decimal number, then a binary ({@code Ki}…) or decimal ({@code k}, {@code M}…)
   * suffix.
   */
  private static final Pattern K8S_MEMORY =
      Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?");

  /** Kubernetes CPU: cores ({@code 1}, {@code 1.5}) or millicores ({@code 500m}). */
  private static final Pattern K8S_CPU = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(m)?");

  /**
   * Docker and Compose: binary units whatever the case, with an optional {@code b} or {@code ib}.
   */
  private static final Pattern DOCKER_BYTES =
      Pattern.compile("([0-9]+(?:\\.[0-9]+)?) ?([kmgtp])?(i?b)?", Pattern.CASE_INSENSITIVE);

  private static final Pattern DOCKER_CPUS = Pattern.compile("[0-9]+(?:\\.[0-9]+)?");

  /** The JVM's {@code -Xmx}, {@code -Xss}: a whole number of bytes, or of KiB, MiB, GiB, TiB. */
  private static final Pattern JVM_SIZE = Pattern.compile("([0-9]+)([kKmMgGtT])?");

  /**
   * More digits than any real quantity has (an exabyte is 19); the bound keeps a value of a million
   * digits from costing a big-number conversion before it is refused.
   */
  private static final int MOST_DIGITS = 30;

  private ResourceQuantities() {}

  /**
   * A Kubernetes memory quantity in bytes, rounded up as Kubernetes does: {@code 512Mi}, {@code
   * 1G}.
   */
  static long k8sMemory(String text) {
    String t = text.trim();
    Matcher m = K8S_MEMORY.matcher(t);
    if (t.length() > MOST_DIGITS || !m.matches()) {
      throw new IllegalArgumentException(
          "expected a Kubernetes memory quantity, like 512Mi, 1Gi, 500M"
              + " or a number of bytes, but was "
              + Printable.quote(text)
              + hint(t));
    }
    String suffix = m.group(2) == null ? "" : m.group(2);
    if (suffix.equals("m")) {
      throw new IllegalArgumentException(
          Printable.quote(text)
              + " is thousandths of a byte (m is"
              + " milli): did you mean "
              + m.group(1)
              + "Mi?");
    }
    return positive(text, new BigDecimal(m.group(1)).multiply(k8sFactor(suffix)));
  }

  private static String hint(String t) {
    Matcher m = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)\\s*([kKmMgGtT])[iI]?[bB]?").matcher(t);
    if (m.matches()) {
      return " (did you mean " + m.group(1) + m.group(2).toUpperCase(Locale.ROOT) + "i?)";
    }
    return "";
  }

  private static BigDecimal k8sFactor(String suffix) {
    switch (suffix) {
      case "":
        return BigDecimal.ONE;
      case "k":
        return BigDecimal.TEN.pow(3);
      case "M":
        return BigDecimal.TEN.pow(6);
      case "G":
        return BigDecimal.TEN.pow(9);
      case "T":
        return BigDecimal.TEN.pow(12);
      case "P":
        return BigDecimal.TEN.pow(15);
      case "E":
        return BigDecimal.TEN.pow(18);
      default: // Ki, Mi, Gi, Ti, Pi, Ei
        return BigDecimal.valueOf(2).pow(10 * ("KMGTPE".indexOf(suffix.charAt(0)) + 1));
    }
  }

  /** A Kubernetes CPU quantity in cores: {@code 500m} is 0.5, {@code 1.5} is 1.5. */
  static double k8sCpu(String text) {
    String t = text.trim();
    Matcher m = K8S_CPU.matcher(t);
    if (t.length() > MOST_DIGITS || !m.matches()) {
      throw new IllegalArgumentException(
          "expected a Kubernetes CPU quantity, like 500m, 1 or 1.5, but was "
              + Printable.quote(text));
    }
    double cores = Double.parseDouble(m.group(1)) / (m.group(2) == null ? 1 : 1000);
    return positiveCores(text, cores);
  }

  /** A Docker (Compose) size in bytes: {@code 512m}, {@code 512M}, {@code 1g}, {@code 1.5GB}. */
  static long dockerBytes(String text) {
    String t = text.trim();
    Matcher m = DOCKER_BYTES.matcher(t);
    if (t.length() > MOST_DIGITS || !m.matches()) {
      throw new IllegalArgumentException(
          "expected a size, like 512m, 1g or a number of bytes, but was " + Printable.quote(text));
    }
    String unit = m.group(2) == null ? "" : m.group(2).toLowerCase(Locale.ROOT);
    BigDecimal factor =
        unit.isEmpty()
            ? BigDecimal.ONE
            : BigDecimal.valueOf(2).pow(10 * ("kmgtp".indexOf(unit.charAt(0)) + 1));
    return positive(text, new BigDecimal(m.group(1)).multiply(factor));
  }

  /** Docker's {@code cpus}: a number of cores, {@code 0.5}, {@code 2}. */
  static double dockerCpus(String text) {
    String t = text.trim();
    if (t.length() > MOST_DIGITS || !DOCKER_CPUS.matcher(t).matches()) {
      throw new IllegalArgumentException(
          "expected a number of CPUs, like 0.5 or 2, but was " + Printable.quote(text));
    }
    return positiveCores(text, Double.parseDouble(t));
  }

  /**
   * A JVM size ({@code -Xmx}, {@code -Xss}) in bytes: {@code 512m}, {@code 2g}, {@code 1048576}.
   */
  static long jvmSize(String text) {
    Matcher m = JVM_SIZE.matcher(text);
    if (text.length() > MOST_DIGITS || !m.matches()) {
      throw new IllegalArgumentException(
          "expected a JVM size, like 512m, 2g or a number of bytes, but"
              + " was "
              + Printable.quote(text));
    }
    String unit = m.group(2) == null ? "" : m.group(2).toLowerCase(Locale.ROOT);
    BigDecimal factor =
        unit.isEmpty()
            ? BigDecimal.ONE
            : BigDecimal.valueOf(2).pow(10 * ("kmgt".indexOf(unit.charAt(0)) + 1));
    return positive(text, new BigDecimal(m.group(1)).multiply(factor));
  }

  private static long positive(String text, BigDecimal bytes) {
    BigDecimal whole = bytes.setScale(0, RoundingMode.CEILING);
    if (whole.signum() <= 0) {
      throw new IllegalArgumentException("must be above zero but was " + Printable.quote(text));
    }
    if (whole.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException(
          Printable.quote(text) + " is more bytes than a long holds");
    }
    return whole.longValueExact();
  }

  private static double positiveCores(String text, double cores) {
    if (!(cores > 0) || Double.isInfinite(cores)) {
      throw new IllegalArgumentException("must be above zero but was " + Printable.quote(text));
    }
    return cores;
  }

  /**
   * Bytes for people, in the largest binary unit that keeps them short: {@code 512 MiB}, {@code 1.5
   * GiB}.
   */
  static String formatBytes(long bytes) {
    if (bytes >= GIB) {
      return Quantities.formatNumber((double) bytes / GIB) + " GiB";
    }
    if (bytes >= MIB) {
      return Quantities.formatNumber((double) bytes / MIB) + " MiB";
    }
    if (bytes >= KIB) {
      return Quantities.formatNumber((double) bytes / KIB) + " KiB";
    }
    return bytes + " bytes";
  }
}
