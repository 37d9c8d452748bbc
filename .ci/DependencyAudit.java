import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CI's dependency audit, run with the JDK's source launcher (no build, no network):
 *
 * <pre>java .ci/DependencyAudit.java KNOWN_VULNERABLE_FILE REPORT MODULE_DIR...</pre>
 *
 * <p>Reads {@code target/dependency-list.txt} of each published module (written by
 * {@code dependency:list -DincludeScope=runtime}: what a user's build pulls in with the module, in
 * compile and runtime scope) and checks every artifact against the curated ranges of known-vulnerable
 * versions. Writes the full report, prints one line, exits 1 if any artifact is in a range, 2 on bad
 * input. This is a tripwire for versions known to be bad, not a vulnerability database: an advisory
 * missing from the file is not checked (see the README).
 */
public final class DependencyAudit {

  private static final Pattern RANGE =
      Pattern.compile("([\\[(])([^,\\[\\]()]*)(?:(,)([^,\\[\\]()]*))?([\\])])");

  record Coordinate(String group, String artifact, String version, String scope) {
    String key() {
      return group + ":" + artifact;
    }
  }

  record Bound(String version, boolean inclusive) {}

  record Range(Bound lower, Bound upper) {
    boolean contains(String v) {
      if (lower != null) {
        int c = compare(v, lower.version());
        if (c < 0 || (c == 0 && !lower.inclusive())) {
          return false;
        }
      }
      if (upper != null) {
        int c = compare(v, upper.version());
        return c < 0 || (c == 0 && upper.inclusive());
      }
      return true;
    }
  }

  record Advisory(String key, List<Range> ranges, String rangeText, String ids, String what,
      int line) {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: java .ci/DependencyAudit.java KNOWN_VULNERABLE_FILE REPORT"
          + " MODULE_DIR...");
      System.exit(2);
    }
    Path knownFile = Path.of(args[0]);
    List<Advisory> advisories;
    try {
      advisories = advisories(knownFile);
    } catch (IllegalArgumentException e) {
      System.err.println("dependency audit: " + e.getMessage());
      System.exit(2);
      return;
    }
    // artifact (g:a:v) -> the modules that pull it in, with the scope
    Map<String, TreeSet<String>> usedBy = new TreeMap<>();
    Map<String, Coordinate> coordinates = new TreeMap<>();
    List<String> modules = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      Path module = Path.of(args[i]);
      Path list = module.resolve("target/dependency-list.txt");
      if (!Files.isRegularFile(list)) {
        System.err.println("dependency audit: " + list + " is missing; run dependency:list first"
            + " (.ci/dependency-audit does)");
        System.exit(2);
      }
      String name = module.getFileName().toString();
      modules.add(name);
      for (String line : Files.readAllLines(list)) {
        Coordinate c = parse(line);
        if (c == null || c.group().equals("io.github.bulkhead")) {
          continue;
        }
        String gav = c.key() + ":" + c.version();
        coordinates.putIfAbsent(gav, c);
        usedBy.computeIfAbsent(gav, k -> new TreeSet<>()).add(name + " (" + c.scope() + ")");
      }
    }
    List<String> findings = new ArrayList<>();
    StringBuilder report = new StringBuilder();
    report.append("Dependency audit of the published modules, ")
        .append(Instant.now().truncatedTo(ChronoUnit.SECONDS)).append('\n')
        .append("Modules: ").append(String.join(", ", modules)).append('\n')
        .append("Scope: compile and runtime dependencies, transitive (dependency:list"
            + " -DincludeScope=runtime); provided and test dependencies are not shipped with the"
            + " modules and are not listed.\n")
        .append("Checked against: ").append(knownFile).append(" (").append(advisories.size())
        .append(" curated ranges of known-vulnerable versions). Not a full CVE scan: the NVD feed"
            + " that OWASP dependency-check needs cannot be downloaded here.\n\n");
    for (Map.Entry<String, Coordinate> e : coordinates.entrySet()) {
      Coordinate c = e.getValue();
      List<String> hits = new ArrayList<>();
      for (Advisory a : advisories) {
        if (a.key().equals(c.key()) && a.ranges().stream().anyMatch(r -> r.contains(c.version()))) {
          hits.add(a.ids() + " " + a.rangeText() + " (" + a.what() + ")");
        }
      }
      boolean listed = advisories.stream().anyMatch(a -> a.key().equals(c.key()));
      String status = !hits.isEmpty() ? "VULNERABLE " + String.join("; ", hits)
          : listed ? "ok (outside every listed range)" : "ok (no entry)";
      report.append(String.format(Locale.ROOT, "%-72s %s%n    used by: %s%n", e.getKey(), status,
          String.join(", ", usedBy.get(e.getKey()))));
      if (!hits.isEmpty()) {
        findings.add(e.getKey() + " " + String.join("; ", hits));
      }
    }
    report.append('\n').append(findings.size()).append(" finding(s)\n");
    for (String f : findings) {
      report.append("  ").append(f).append('\n');
    }
    Path out = Path.of(args[1]);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, report);
    System.out.println("dependency audit: " + coordinates.size() + " third-party artifacts of "
        + modules.size() + " published modules checked against " + advisories.size()
        + " known-vulnerable ranges: " + (findings.isEmpty() ? "no finding"
            : findings.size() + " finding(s): " + String.join(" | ", findings))
        + " (report: " + out + ")");
    System.exit(findings.isEmpty() ? 0 : 1);
  }

  /** "   g:a:type[:classifier]:version:scope[ (optional)] -- module m", or null for other lines. */
  static Coordinate parse(String line) {
    String s = line.strip();
    int module = s.indexOf(" -- ");
    if (module >= 0) {
      s = s.substring(0, module);
    }
    s = s.replace(" (optional)", "").strip();
    if (s.isEmpty() || s.contains(" ")) {
      return null;
    }
    String[] p = s.split(":");
    if (p.length == 5) {
      return new Coordinate(p[0], p[1], p[3], p[4]);
    }
    if (p.length == 6) {
      return new Coordinate(p[0], p[1], p[4], p[5]);
    }
    return null;
  }

  static List<Advisory> advisories(Path file) throws IOException {
    List<Advisory> out = new ArrayList<>();
    List<String> lines = Files.readAllLines(file);
    for (int n = 1; n <= lines.size(); n++) {
      String line = lines.get(n - 1).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\\s+", 4);
      if (f.length < 4 || f[0].split(":").length != 2) {
        throw new IllegalArgumentException(file + " line " + n + ": expected 'groupId:artifactId"
            + " RANGES ADVISORY-IDS description' but was '" + line + "'");
      }
      out.add(new Advisory(f[0], ranges(file, n, f[1]), f[1], f[2], f[3], n));
    }
    return out;
  }

  static List<Range> ranges(Path file, int n, String text) {
    List<Range> out = new ArrayList<>();
    Matcher m = RANGE.matcher(text);
    int at = 0;
    while (m.find() && m.start() == at) {
      boolean single = m.group(3) == null;
      String lo = m.group(2).strip();
      String hi = single ? lo : m.group(4).strip();
      if (single && !(m.group(1).equals("[") && m.group(5).equals("]"))) {
        throw new IllegalArgumentException(file + " line " + n + ": a single version needs [v] in '"
            + text + "'");
      }
      out.add(new Range(lo.isEmpty() ? null : new Bound(lo, m.group(1).equals("[")),
          hi.isEmpty() ? null : new Bound(hi, m.group(5).equals("]"))));
      at = m.end();
      if (at < text.length() && text.charAt(at) == ',') {
        at++;
      }
    }
    if (at != text.length() || out.isEmpty()) {
      throw new IllegalArgumentException(file + " line " + n + ": '" + text + "' is not a Maven"
          + " version range like [2.0,2.17.1) or [1.0,1.2),[2.0,2.3)");
    }
    return out;
  }

  /**
   * Compares versions the way Maven orders them, closely enough for release versions: items split
   * at '.', '-' and digit/letter changes; numbers compare as numbers and sort after qualifiers;
   * qualifiers order alpha < beta < milestone < rc < snapshot < release (ga, final, release or
   * none) < sp; a missing item equals 0 or the release qualifier.
   */
  static int compare(String a, String b) {
    List<String> x = items(a);
    List<String> y = items(b);
    for (int i = 0; i < Math.max(x.size(), y.size()); i++) {
      String p = i < x.size() ? x.get(i) : null;
      String q = i < y.size() ? y.get(i) : null;
      int c = compareItem(p, q);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  private static int compareItem(String p, String q) {
    boolean pn = p != null && Character.isDigit(p.charAt(0));
    boolean qn = q != null && Character.isDigit(q.charAt(0));
    if (p == null) {
      p = qn ? "0" : "";
      pn = qn;
    }
    if (q == null) {
      q = pn ? "0" : "";
      qn = pn;
    }
    if (pn && qn) {
      return new java.math.BigInteger(p).compareTo(new java.math.BigInteger(q));
    }
    if (pn != qn) {
      return pn ? 1 : -1;
    }
    int rp = rank(p);
    int rq = rank(q);
    return rp != rq ? Integer.compare(rp, rq) : p.compareTo(q);
  }

  private static int rank(String qualifier) {
    switch (qualifier) {
      case "alpha": case "a": return 1;
      case "beta": case "b": return 2;
      case "milestone": case "m": return 3;
      case "rc": case "cr": return 4;
      case "snapshot": return 5;
      case "": case "ga": case "final": case "release": return 7;
      case "sp": return 8;
      default: return 6; // an unknown qualifier: before the release, after a snapshot
    }
  }

  private static List<String> items(String version) {
    List<String> out = new ArrayList<>();
    StringBuilder item = new StringBuilder();
    String v = version.toLowerCase(Locale.ROOT);
    for (int i = 0; i < v.length(); i++) {
      char ch = v.charAt(i);
      if (ch == '.' || ch == '-' || ch == '_') {
        flush(out, item);
      } else {
        if (item.length() > 0 && Character.isDigit(ch) != Character.isDigit(item.charAt(0))) {
          flush(out, item);
        }
        item.append(ch);
      }
    }
    flush(out, item);
    // Trailing zeros and release qualifiers do not change a version: 1.0 = 1 = 1.0.0.Final.
    while (!out.isEmpty() && (out.get(out.size() - 1).equals("0")
        || rank(out.get(out.size() - 1)) == 7 && !Character.isDigit(out.get(out.size() - 1).charAt(0))
            && !out.get(out.size() - 1).isEmpty())) {
      out.remove(out.size() - 1);
    }
    return out;
  }

  private static void flush(List<String> out, StringBuilder item) {
    if (item.length() > 0) {
      out.add(item.toString());
      item.setLength(0);
    }
  }
}
