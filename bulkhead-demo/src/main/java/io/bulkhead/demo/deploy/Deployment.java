package io.bulkhead.demo.deploy;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.ConfigException;
import io.bulkhead.config.internal.YamlTree;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * One deployment of the services a bulkhead file sizes: a Docker Compose file ({@link
 * ComposeReader}), or Kubernetes manifests, a file of one or more documents or a directory of them
 * ({@link KubernetesReader}). {@link #check} holds it against the file: every container has memory
 * and CPU limits, the JVM's heap leaves room below the memory limit, CPU-bound compartments do not
 * run more calls at once than the container has CPUs, and the database's {@code max_connections}
 * holds every pool of every replica.
 *
 * <p>Two names tie the deployment to the bulkhead file, as Compose labels or Kubernetes
 * pod-template annotations: {@code bulkhead.io/compartments: checkout, search} on the container
 * that runs those compartments (a pod of several containers says which one with {@code
 * bulkhead.io/container}), and {@code bulkhead.io/budget: postgres} on the database server whose
 * command sets {@code max_connections} (and {@code superuser_reserved_connections}) with {@code
 * -c}. The JVM's options are read where the JVM reads them, later ones winning: the {@code
 * JAVA_TOOL_OPTIONS} and {@code JDK_JAVA_OPTIONS} environment variables, then the command.
 *
 * <p>{@link #load} fails with a {@link ConfigException} naming the file, the line and the key for a
 * file it cannot read, malformed YAML, a wrong type or a malformed quantity ({@code 512MB}, {@code
 * 500m} of memory); problems of the deployment itself are {@link #check}'s answer. The same bounds
 * as the bulkhead file apply: at most {@link BulkheadFile#MAX_FILE_BYTES} a file, at most {@link
 * #MAX_FILES} files in a directory.
 *
 * <p>This class is immutable.
 */
public final class Deployment {

  /**
   * The most manifests {@link #load} reads from one directory. A service's manifests are a handful;
   * the bound keeps a wrong directory (a home directory, {@code /}) from being read file by file.
   */
  public static final int MAX_FILES = 64;

  private final String name;
  private final List<String> files;
  private final List<Container> containers;

  private Deployment(String name, List<String> files, List<Container> containers) {
    this.name = name;
    this.files = List.copyOf(files);
    this.containers = List.copyOf(containers);
  }

  /**
   * Reads a Compose file, a file of Kubernetes manifests, or a directory of them (its {@code .yaml}
   * and {@code .yml} files, in name order, not its subdirectories), named in errors as {@code path}
   * was written.
   *
   * @throws ConfigException if a file cannot be read, is not valid YAML, is neither Compose nor
   *     Kubernetes, or holds a value of the wrong type or a malformed quantity
   */
  public static Deployment load(Path path) {
    Objects.requireNonNull(path, "path");
    String name = path.toString();
    List<Path> paths = new ArrayList<>();
    if (Files.isDirectory(path)) {
      try (DirectoryStream<Path> dir = Files.newDirectoryStream(path, "*.{yaml,yml}")) {
        for (Path p : dir) {
          if (Files.isRegularFile(p)) {
            if (paths.size() == MAX_FILES) {
              throw new ConfigException(
                  name,
                  0,
                  null,
                  "holds more than "
                      + MAX_FILES
                      + " manifests: name the directory of one service's deployment");
            }
            paths.add(p);
          }
        }
      } catch (NoSuchFileException e) {
        throw new ConfigException(name, 0, null, "no such directory", e);
      } catch (IOException e) {
        throw new ConfigException(name, 0, null, "cannot be read: " + e, e);
      }
      if (paths.isEmpty()) {
        throw new ConfigException(name, 0, null, "is a directory without .yaml or .yml files");
      }
      paths.sort(null);
    } else {
      paths.add(path);
    }
    List<String> files = new ArrayList<>();
    List<Container> containers = new ArrayList<>();
    Map<String, Integer> autoscaled = new LinkedHashMap<>();
    for (Path p : paths) {
      String file = p.toString();
      files.add(file);
      YamlTree yaml =
          new YamlTree(
              file,
              YamlTree.MAX_MANIFEST_NESTING,
              "a Kubernetes manifest nests about a dozen deep");
      read(yaml, YamlTree.read(p, file), containers, autoscaled);
    }
    List<Container> scaled = new ArrayList<>();
    for (Container c : containers) {
      Integer max = autoscaled.get(c.kind + "/" + c.workload);
      scaled.add(max == null ? c : c.autoscaled(max));
    }
    return new Deployment(name, files, scaled);
  }

  /** Reads one file's text: a Compose file, or Kubernetes manifests. */
  private static void read(
      YamlTree yaml, String text, List<Container> containers, Map<String, Integer> autoscaled) {
    if (text.length() > BulkheadFile.MAX_FILE_BYTES) {
      throw YamlTree.tooLarge(yaml.file);
    }
    List<Node> documents = yaml.composeAll(text);
    if (documents.isEmpty()) {
      throw new ConfigException(
          yaml.file,
          0,
          null,
          "the file is empty: expected a Compose file (services) or Kubernetes manifests (kind)");
    }
    if (ComposeReader.isCompose(yaml, documents)) {
      new ComposeReader(yaml, containers).read(documents.get(0));
    } else {
      new KubernetesReader(yaml, containers, autoscaled).read(documents);
    }
  }

  /** The path the deployment was loaded from, as it was named. */
  public String name() {
    return name;
  }

  /** The files read, in the order read. */
  public List<String> files() {
    return files;
  }

  /**
   * Holds this deployment against the bulkhead file whose compartments it runs.
   *
   * @see DeploymentCheck for the rules and their thresholds
   */
  public DeploymentCheck check(BulkheadFile config) {
    return DeploymentCheck.of(Objects.requireNonNull(config, "config"), this);
  }

  List<Container> containers() {
    return containers;
  }

  @Override
  public String toString() {
    return "Deployment{" + name + ", files=" + files + "}";
  }
}
