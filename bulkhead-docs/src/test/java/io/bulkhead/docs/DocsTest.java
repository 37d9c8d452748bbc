package io.bulkhead.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The documentation cannot drift from the API: every {@code java} block of README.md, of docs/*.md
 * and of the root pages the site includes (DESIGN.md, BENCHMARKS.md, CHANGELOG.md) is compiled
 * against the published modules, in one compiler run; and mkdocs.yml lists every page.
 *
 * <p>A block is a method body of a class that extends {@link Givens}, or that page's {@code
 * <Page>Givens} when there is one ({@code http-edges.md}: {@code HttpEdgesGivens}). It is class
 * members instead when its first line that is not an import starts a declaration (an annotation,
 * {@code class}, {@code record}, {@code interface}, {@code enum} or a modifier). Its leading {@code
 * import} lines are its own; the packages every published module exports are imported on demand,
 * except a package with a public type named as one of {@code io.bulkhead}'s (the Spring starter's
 * {@code @Bulkhead}), which a block imports itself. docs/index.md states the same for writers.
 */
class DocsTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final List<String> INCLUDED_ROOT_PAGES =
      List.of("DESIGN.md", "BENCHMARKS.md", "CHANGELOG.md");
  private static final List<String> JDK_IMPORTS =
      List.of(
          "java.time",
          "java.util",
          "java.util.concurrent",
          "java.net.http",
          "javax.sql",
          "reactor.core.publisher",
          "io.micrometer.core.instrument");
  private static final Pattern OPEN = Pattern.compile("^(\\s*)```java\\s*$");
  private static final Pattern DECLARATION =
      Pattern.compile(
          "^(@|(public|protected|private|static|final|abstract|sealed|non-sealed)\\s"
              + "|(class|record|interface|enum)\\s)");

  /** One java block: the file it is in, the line of its first line of code, its code. */
  record Block(String page, int firstLine, List<String> lines) {}

  @Test
  void everyJavaBlockCompiles() throws IOException {
    List<Block> blocks = new ArrayList<>();
    for (Path page : pages()) {
      blocks.addAll(blocks(page));
    }
    assertThat(blocks).as("java blocks found in README.md and docs/").hasSizeGreaterThan(10);

    List<String> imports = apiPackages();
    assertThat(imports).as("packages exported by the published modules").contains("io.bulkhead");
    List<Unit> units = new ArrayList<>();
    for (Block block : blocks) {
      units.add(unit(block, imports, units.size()));
    }

    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    Path out = Files.createTempDirectory("bulkhead-docs-snippets");
    try (StandardJavaFileManager files =
        compiler.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      List<String> options =
          List.of(
              "-classpath",
              System.getProperty("java.class.path"),
              "-d",
              out.toString(),
              "-proc:none",
              "-implicit:none",
              "-nowarn");
      compiler.getTask(null, files, diagnostics, options, null, units).call();
    } finally {
      deleteTree(out);
    }
    List<String> errors =
        diagnostics.getDiagnostics().stream()
            .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
            .map(DocsTest::describe)
            .toList();
    System.out.printf(
        "DocsTest: compiled %d java blocks from %d pages%n",
        blocks.size(), blocks.stream().map(Block::page).distinct().count());
    assertThat(errors).as("compiler errors in documentation snippets").isEmpty();
  }

  @Test
  void mkdocsNavListsEveryPageAndOnlyPagesThatExist() throws IOException {
    Set<String> nav = new TreeSet<>();
    Matcher entry =
        Pattern.compile("(?m)^\\s+- [^:\\n]+: ([\\w./-]+\\.md)\\s*$")
            .matcher(Files.readString(ROOT.resolve("mkdocs.yml")));
    while (entry.find()) {
      nav.add(entry.group(1));
    }
    Set<String> onDisk;
    try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
      onDisk =
          files
              .filter(f -> f.toString().endsWith(".md"))
              .map(f -> ROOT.resolve("docs").relativize(f).toString().replace('\\', '/'))
              .collect(Collectors.toCollection(TreeSet::new));
    }
    assertThat(nav).as("the pages in mkdocs.yml's nav").isEqualTo(onDisk);
  }

  @Test
  void readmeAddsTheBuildsVersion() throws IOException {
    String version = System.getProperty("bulkhead.version");
    assertThat(version).as("bulkhead.version, set by the pom").isNotBlank();
    String readme = Files.readString(ROOT.resolve("README.md"));
    assertThat(readme)
        .as("README's Maven and Gradle lines name the version being built")
        .contains("<version>" + version + "</version>")
        .contains("io.github.bulkhead:bulkhead-bom:" + version + "\"");
  }

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    for (String root : INCLUDED_ROOT_PAGES) {
      pages.add(ROOT.resolve(root));
    }
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }

  /** The java blocks of one page; a fence may be indented (inside a list item). */
  static List<Block> blocks(Path page) throws IOException {
    List<String> lines = Files.readAllLines(page);
    String name = ROOT.relativize(page).toString().replace('\\', '/');
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher open = OPEN.matcher(lines.get(i));
      if (!open.matches()) {
        continue;
      }
      String indent = open.group(1);
      List<String> code = new ArrayList<>();
      int j = i + 1;
      while (j < lines.size() && !lines.get(j).strip().equals("```")) {
        String line = lines.get(j);
        code.add(line.startsWith(indent) ? line.substring(indent.length()) : line.strip());
        j++;
      }
      assertThat(j).as("%s:%d: the java block is closed", name, i + 1).isLessThan(lines.size());
      blocks.add(new Block(name, i + 2, code));
      i = j;
    }
    return blocks;
  }

  /** A block as a compilation unit, mapping the compiler's lines back to the page's. */
  static final class Unit extends SimpleJavaFileObject {
    final Block block;
    final int headerLines;
    final String source;

    Unit(String className, Block block, int headerLines, String source) {
      super(URI.create("string:///io/bulkhead/docs/" + className + ".java"), Kind.SOURCE);
      this.block = block;
      this.headerLines = headerLines;
      this.source = source;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return source;
    }
  }

  private static Unit unit(Block block, List<String> apiImports, int index) {
    List<String> own = new ArrayList<>();
    List<String> body = new ArrayList<>();
    boolean leading = true;
    String firstCode = "";
    for (String line : block.lines()) {
      if (leading && line.startsWith("import ")) {
        own.add(line);
        body.add(""); // keeps the block's lines where the page has them
        continue;
      }
      if (leading && !line.isBlank()) {
        leading = false;
        firstCode = line.strip();
      }
      body.add(line);
    }
    boolean members = DECLARATION.matcher(firstCode).find();
    String className = "Snippet" + index;
    StringBuilder header = new StringBuilder("package io.bulkhead.docs;\n");
    for (String p : apiImports) {
      header.append("import ").append(p).append(".*;\n");
    }
    for (String p : JDK_IMPORTS) {
      header.append("import ").append(p).append(".*;\n");
    }
    own.forEach(line -> header.append(line).append('\n'));
    header.append("@SuppressWarnings(\"all\") class ").append(className);
    header.append(" extends ").append(givens(block.page())).append(" {\n");
    if (!members) {
      header.append("void snippet() throws Exception {\n");
    }
    String source = header + String.join("\n", body) + (members ? "\n}\n" : "\n}\n}\n");
    int headerLines = (int) header.chars().filter(c -> c == '\n').count();
    return new Unit(className, block, headerLines, source);
  }

  /** {@code docs/http-edges.md} -> {@code HttpEdgesGivens} if that class exists, else Givens. */
  static String givens(String page) {
    String base = page.substring(page.lastIndexOf('/') + 1).replaceFirst("\\.md$", "");
    StringBuilder name = new StringBuilder();
    for (String part : base.toLowerCase(Locale.ROOT).split("[^a-z0-9]+")) {
      if (!part.isEmpty()) {
        name.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
      }
    }
    name.append("Givens");
    try {
      Class.forName(DocsTest.class.getPackageName() + "." + name);
      return name.toString();
    } catch (ClassNotFoundException e) {
      return "Givens";
    }
  }

  private static String describe(Diagnostic<? extends JavaFileObject> d) {
    if (d.getSource() instanceof Unit unit) {
      long line = unit.block.firstLine() + (d.getLineNumber() - unit.headerLines - 1);
      return unit.block.page() + ":" + line + ": " + d.getMessage(Locale.ROOT);
    }
    return String.valueOf(d.getSource()) + ": " + d.getMessage(Locale.ROOT);
  }

  /**
   * The packages the published modules export to everyone, read from their module descriptors (a
   * module without one, the Spring starter, gives every package with a public type), less those
   * with a public type named as one of {@code io.bulkhead}'s.
   */
  static List<String> apiPackages() {
    TreeMap<String, Set<String>> typesByPackage = new TreeMap<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path path = Path.of(entry);
      if (!path.getFileName().toString().startsWith("bulkhead-") && !isModuleClasses(path)) {
        continue;
      }
      for (String type : publicTypes(path)) {
        String pkg = type.substring(0, type.lastIndexOf('.'));
        typesByPackage
            .computeIfAbsent(pkg, k -> new TreeSet<>())
            .add(type.substring(pkg.length() + 1));
      }
    }
    Set<String> core = typesByPackage.getOrDefault("io.bulkhead", Set.of());
    return typesByPackage.entrySet().stream()
        .filter(
            e ->
                e.getKey().equals("io.bulkhead") || e.getValue().stream().noneMatch(core::contains))
        .map(e -> e.getKey())
        .toList();
  }

  /** A reactor module's target/classes, as Maven puts it on the test class path. */
  private static boolean isModuleClasses(Path path) {
    return path.endsWith("target/classes")
        && path.getParent().getParent().getFileName().toString().startsWith("bulkhead-");
  }

  /** Public top-level types of exported packages under io.bulkhead in one class path entry. */
  private static List<String> publicTypes(Path entry) {
    List<String> classFiles = new ArrayList<>();
    ModuleDescriptor descriptor = null;
    try {
      if (Files.isDirectory(entry)) {
        try (Stream<Path> files = Files.walk(entry)) {
          files.forEach(f -> classFiles.add(entry.relativize(f).toString().replace('\\', '/')));
        }
        Path info = entry.resolve("module-info.class");
        if (Files.exists(info)) {
          try (var in = Files.newInputStream(info)) {
            descriptor = ModuleDescriptor.read(in);
          }
        }
      } else if (Files.isRegularFile(entry)) {
        try (JarFile jar = new JarFile(entry.toFile())) {
          jar.stream().forEach(e -> classFiles.add(e.getName()));
          var info = jar.getEntry("module-info.class");
          if (info != null) {
            try (var in = jar.getInputStream(info)) {
              descriptor = ModuleDescriptor.read(in);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Set<String> exported =
        descriptor == null
            ? null
            : descriptor.exports().stream()
                .filter(x -> !x.isQualified())
                .map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
    List<String> types = new ArrayList<>();
    for (String file : classFiles) {
      if (!file.startsWith("io/bulkhead/") || !file.endsWith(".class") || file.contains("$")) {
        continue;
      }
      String type = file.substring(0, file.length() - ".class".length()).replace('/', '.');
      String pkg = type.substring(0, type.lastIndexOf('.'));
      if (type.endsWith("package-info") || (exported != null && !exported.contains(pkg))) {
        continue;
      }
      try {
        if (Modifier.isPublic(
            Class.forName(type, false, DocsTest.class.getClassLoader()).getModifiers())) {
          types.add(type);
        }
      } catch (ClassNotFoundException | LinkageError e) {
        // a type whose optional dependency is absent is not one a snippet can use either
      }
    }
    return types;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
        Files.delete(f);
      }
    }
  }
}
