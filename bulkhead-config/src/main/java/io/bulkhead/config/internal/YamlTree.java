package io.bulkhead.config.internal;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.ConfigException;
import io.bulkhead.config.Quantities;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.Parser;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The YAML node tree of one file, read with SnakeYAML Engine's composer so that every node keeps
 * its position, and the checks every section needs: a mapping where one is expected, scalar keys,
 * no duplicates, no unknown keys (with a suggestion), a value where one is expected. Each failure
 * is a {@link ConfigException} naming the file, the line and the key.
 */
public final class YamlTree {

  /**
   * Keys of earlier versions of the file, too far from their new names for {@link DidYouMean}, and
   * the names that replaced them (the builders' {@code maxQueue} and {@code maxWait}).
   */
  private static final Map<String, String> RENAMED =
      Map.of("queue", "max-queue", "wait", "max-wait");

  /**
   * How deep collections may nest. The file's own structure is three deep (sections, names, keys);
   * the bound stops a file of {@code [[[[…} or of thousands of nested mappings before the composer,
   * which recurses once per level, runs out of stack.
   */
  public static final int MAX_NESTING = 16;

  /** How many names an "expected one of" hint lists before it says how many more there are. */
  private static final int LISTED = 12;

  /** One {@code key: value} of a mapping, with the dotted path of the key. */
  public record Entry(String key, String path, Node keyNode, Node value) {}

  /**
   * How deep a deployment manifest's collections may nest. A Kubernetes Deployment's container
   * resources are seven deep and an affinity rule about a dozen; twice that stops a hostile file
   * long before the composer's stack would.
   */
  public static final int MAX_MANIFEST_NESTING = 32;

  public final String file;
  private final int maxNesting;
  private final String nestingWhy;

  /** A tree for a bulkhead file: {@link #MAX_NESTING} deep at most. */
  public YamlTree(String file) {
    this(file, MAX_NESTING, "the file's structure is three deep (sections, names, keys)");
  }

  /**
   * A tree whose collections nest at most {@code maxNesting} deep; {@code why} ends the message
   * that refuses a deeper one.
   */
  public YamlTree(String file, int maxNesting, String why) {
    this.file = file;
    this.maxNesting = maxNesting;
    this.nestingWhy = why;
  }

  /**
   * Reads the file at {@code path} as UTF-8 text, at most {@link BulkheadFile#MAX_FILE_BYTES};
   * every failure is one line naming the file as {@code name}.
   */
  public static String read(Path path, String name) {
    byte[] bytes;
    // One byte more than the cap tells a file at the cap from one beyond it, without reading the
    // rest
    // (a sparse 2 GB file, /dev/zero): memory and time stay bounded by the cap.
    try (InputStream in = Files.newInputStream(path)) {
      bytes = in.readNBytes(BulkheadFile.MAX_FILE_BYTES + 1);
    } catch (NoSuchFileException e) {
      throw new ConfigException(name, 0, null, "no such file", e);
    } catch (AccessDeniedException e) {
      throw new ConfigException(name, 0, null, "permission denied", e);
    } catch (IOException e) {
      String why = Files.isDirectory(path) ? "is a directory, not a file" : "cannot be read: " + e;
      throw new ConfigException(name, 0, null, why, e);
    }
    if (bytes.length > BulkheadFile.MAX_FILE_BYTES) {
      throw tooLarge(name);
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new ConfigException(name, 0, null, "not UTF-8 text", e);
    }
  }

  public static ConfigException tooLarge(String name) {
    return new ConfigException(
        name,
        0,
        null,
        "is larger than "
            + BulkheadFile.MAX_FILE_BYTES
            + " bytes (1 MiB): a configuration file is a few kilobytes");
  }

  /** Composes the single document in {@code text}; empty when the file holds no document. */
  public Optional<Node> compose(String text) {
    return composeWith(text, Composer::getSingleNode);
  }

  /**
   * Composes every document of a stream ({@code ---} between them), in order, skipping empty ones.
   */
  public List<Node> composeAll(String text) {
    return composeWith(
        text,
        composer -> {
          List<Node> documents = new ArrayList<>();
          while (composer.hasNext()) {
            Node document = composer.next();
            if (!(document instanceof ScalarNode) || !document.getTag().equals(Tag.NULL)) {
              documents.add(document);
            }
          }
          return documents;
        });
  }

  private <T> T composeWith(String text, Function<Composer, T> documents) {
    LoadSettings settings =
        LoadSettings.builder()
            .setLabel(file)
            .setSchema(new CoreSchema())
            .setMaxAliasesForCollections(50) // a configuration file has no use for alias bombs
            .setCodePointLimit(BulkheadFile.MAX_FILE_BYTES)
            .build();
    try {
      Parser parser = new DepthLimited(new ParserImpl(settings, new StreamReader(settings, text)));
      return documents.apply(new Composer(settings, parser));
    } catch (MarkedYamlEngineException e) {
      Optional<Mark> mark =
          e.getProblemMark().isPresent() ? e.getProblemMark() : e.getContextMark();
      int line = mark.map(m -> m.getLine() + 1).orElse(0);
      String problem = e.getProblem() != null ? e.getProblem() : e.getContext();
      if (e.getContext() != null && e.getProblem() != null) {
        problem = problem + " (" + e.getContext() + ")";
      }
      throw new ConfigException(file, line, null, "invalid YAML: " + oneLine(problem), e);
    } catch (YamlEngineException e) {
      throw new ConfigException(file, 0, null, "invalid YAML: " + oneLine(e.getMessage()), e);
    }
  }

  /**
   * The parser's events, counting how deep collections nest and refusing one level too many as the
   * composer asks for it: the composer recurses only after it has taken a collection's start event,
   * so its depth never exceeds the tree's bound. The parser itself keeps its state on the heap.
   */
  private final class DepthLimited implements Parser {

    private final Parser events;
    private int depth;

    DepthLimited(Parser events) {
      this.events = events;
    }

    @Override
    public boolean checkEvent(Event.ID id) {
      return events.checkEvent(id);
    }

    @Override
    public Event peekEvent() {
      return events.peekEvent();
    }

    @Override
    public boolean hasNext() {
      return events.hasNext();
    }

    @Override
    public Event next() {
      Event e = events.next();
      switch (e.getEventId()) {
        case SequenceStart:
        case MappingStart:
          if (++depth > maxNesting) {
            int at = e.getStartMark().map(m -> m.getLine() + 1).orElse(0);
            throw new ConfigException(
                file,
                at,
                null,
                "collections nested more than " + maxNesting + " deep: " + nestingWhy);
          }
          break;
        case SequenceEnd:
        case MappingEnd:
          depth--;
          break;
        default:
          break;
      }
      return e;
    }
  }

  public static int line(Node node) {
    return node.getStartMark().map(m -> m.getLine() + 1).orElse(0);
  }

  public ConfigException error(Node at, String path, String problem) {
    return new ConfigException(file, line(at), path, problem);
  }

  /**
   * The entries of {@code node}, which must be a mapping, in file order.
   *
   * @param known the keys allowed, or null when the keys are names (of compartments, budgets)
   */
  public Map<String, Entry> mapping(Node node, String path, Collection<String> known) {
    if (!(node instanceof MappingNode)) {
      throw error(
          node, path, "expected a mapping (indented key: value lines) but found " + describe(node));
    }
    Map<String, Entry> entries = new LinkedHashMap<>();
    for (NodeTuple t : ((MappingNode) node).getValue()) {
      Node k = t.getKeyNode();
      if (!(k instanceof ScalarNode) || k.getTag().equals(Tag.NULL)) {
        throw error(k, path, "keys must be plain names but found " + describe(k));
      }
      String key = ((ScalarNode) k).getValue();
      String keyPath = path == null ? key : path + "." + key;
      Entry previous = entries.get(key);
      if (previous != null) {
        throw error(
            k, keyPath, "duplicate key (first given on line " + line(previous.keyNode()) + ")");
      }
      if (known != null && !known.contains(key)) {
        String renamed = RENAMED.get(key);
        throw error(
            k,
            keyPath,
            "unknown key"
                + (renamed != null && known.contains(renamed)
                    ? " (did you mean '" + renamed + "'?)"
                    : suggestion(key, known)));
      }
      entries.put(key, new Entry(key, keyPath, k, t.getValueNode()));
    }
    return entries;
  }

  public static String suggestion(String word, Collection<String> known) {
    Optional<String> close = DidYouMean.closest(word, known);
    if (close.isPresent()) {
      return " (did you mean '" + close.get() + "'?)";
    }
    List<String> listed = new ArrayList<>();
    for (String k : new TreeSet<>(known)) {
      if (listed.size() == LISTED) {
        listed.add("and " + (known.size() - LISTED) + " more");
        break;
      }
      listed.add(Printable.shown(k));
    }
    return " (expected one of: " + String.join(", ", listed) + ")";
  }

  /** The items of {@code node}, which must be a list. */
  public List<Node> list(Node node, String path) {
    if (!(node instanceof SequenceNode)) {
      throw error(
          node, path, "expected a list (lines starting with '- ') but found " + describe(node));
    }
    return ((SequenceNode) node).getValue();
  }

  /** A value that must be true or false. */
  public boolean bool(Entry e) {
    String text = scalar(e).trim();
    if (!e.value().getTag().equals(Tag.BOOL)) {
      throw error(e.value(), e.path(), "expected true or false but was " + Printable.quote(text));
    }
    return text.equalsIgnoreCase("true");
  }

  /** The text of a scalar value; fails for a missing value, a list or a mapping. */
  public String scalar(Entry e) {
    Node v = e.value();
    if (!(v instanceof ScalarNode)) {
      throw error(v, e.path(), "expected a single value but found " + describe(v));
    }
    if (v.getTag().equals(Tag.NULL)) {
      throw error(e.keyNode(), e.path(), "has no value");
    }
    return ((ScalarNode) v).getValue();
  }

  /** A whole number of at least {@code min}. */
  public int whole(Entry e, int min) {
    String text = scalar(e);
    long n;
    try {
      n = Quantities.parseWhole(text);
    } catch (IllegalArgumentException notWhole) {
      throw error(e.value(), e.path(), "expected a whole number but was " + Printable.quote(text));
    }
    if (n < min || n > Integer.MAX_VALUE) {
      throw error(
          e.value(),
          e.path(),
          "must be "
              + (min == 0 ? "zero or more" : "at least " + min)
              + " but was "
              + Printable.shown(text.trim()));
    }
    return (int) n;
  }

  public static String describe(Node node) {
    if (node instanceof MappingNode) {
      return "a mapping";
    }
    if (node instanceof SequenceNode) {
      return "a list";
    }
    if (node.getTag().equals(Tag.NULL)) {
      return "nothing";
    }
    return "the value " + Printable.quote(((ScalarNode) node).getValue());
  }

  private static String oneLine(String s) {
    if (s == null) {
      return "unreadable";
    }
    List<String> parts = new ArrayList<>();
    for (String p : s.split("\\R")) {
      if (!p.isBlank()) {
        parts.add(p.trim());
      }
    }
    return String.join(" ", parts);
  }
}
