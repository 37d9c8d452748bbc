package io.bulkhead.internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * Writes one JSON document (RFC 8259) into a string, value by value: what {@code bulkhead-insight}
 * writes its snapshot with, and what the demo, the scenarios and the benchmarks write their reports
 * with. Not an API (see the package); applications use their own JSON library.
 *
 * <pre>{@code
 * JsonWriter out = JsonWriter.compact();
 * out.beginObject().name("uptimeMs").value(uptime.toMillis());
 * out.name("compartments").rawValue(insight.snapshot().compartmentsJson());
 * String json = out.endObject().toJson();
 * }</pre>
 *
 * <p>Strings are escaped so that any Java string survives the trip: quotes and backslashes, control
 * characters (U+0000 to U+001F and U+007F to U+009F, which would otherwise reach a terminal as
 * escape sequences), U+2028 and U+2029 (line breaks to JavaScript), and lone surrogates (which have
 * no UTF-8 form) are escaped, the last four kinds as a backslash, {@code u} and four hex digits;
 * everything else is written as it is. Numbers that JSON cannot hold (NaN and the infinities) are
 * written as {@code null}, the value JSON has for "not known". Whole doubles are written without a
 * fraction ({@code 3}, not {@code 3.0}).
 *
 * <p>The writer checks the structure as it goes and throws {@link IllegalStateException} on a value
 * where a name is due, a name outside an object, a close that does not match, or a second top-level
 * value, so a mistake fails where it is made instead of producing a document no parser reads.
 *
 * <p>This class is <em>not</em> thread-safe: one writer per document.
 */
public final class JsonWriter {

  private static final char[] HEX = "0123456789abcdef".toCharArray();
  private static final String INDENT = "  ";
  private static final int INITIAL_DEPTH = 8;

  /** An array; its next value needs a comma unless it is the first. */
  private static final byte ARRAY = 1;

  /** An object whose next token must be a name (or the end). */
  private static final byte OBJECT = 2;

  /** An object that has been given a name and waits for its value. */
  private static final byte MEMBER_VALUE = 3;

  private final StringBuilder out = new StringBuilder(256);
  private final boolean pretty;
  private byte[] scopes = new byte[INITIAL_DEPTH];
  private boolean[] empty = new boolean[INITIAL_DEPTH];
  private int depth;
  private boolean written; // the top-level value has begun

  private JsonWriter(boolean pretty) {
    this.pretty = pretty;
  }

  /** A writer of compact JSON: no whitespace between tokens. For endpoints. */
  public static JsonWriter compact() {
    return new JsonWriter(false);
  }

  /**
   * A writer that puts each member and element on a line of its own, indented by two spaces. For
   * files people read.
   */
  public static JsonWriter pretty() {
    return new JsonWriter(true);
  }

  /** Begins an object; its members follow as {@link #name} and a value each. */
  public JsonWriter beginObject() {
    beforeValue();
    out.append('{');
    push(OBJECT);
    return this;
  }

  /**
   * Ends the current object.
   *
   * @throws IllegalStateException if no object is open, or a name is still waiting for its value
   */
  public JsonWriter endObject() {
    if (depth == 0 || scopes[depth - 1] != OBJECT) {
      throw new IllegalStateException(
          depth > 0 && scopes[depth - 1] == MEMBER_VALUE
              ? "endObject() after a name with no value"
              : "endObject() with no object open");
    }
    return close('}');
  }

  /** Begins an array; its elements follow as values. */
  public JsonWriter beginArray() {
    beforeValue();
    out.append('[');
    push(ARRAY);
    return this;
  }

  /**
   * Ends the current array.
   *
   * @throws IllegalStateException if no array is open
   */
  public JsonWriter endArray() {
    if (depth == 0 || scopes[depth - 1] != ARRAY) {
      throw new IllegalStateException("endArray() with no array open");
    }
    return close(']');
  }

  /**
   * Writes the name of the next member of the current object; its value comes next.
   *
   * @throws IllegalStateException if no object is open, or the previous name still waits for a
   *     value
   */
  public JsonWriter name(String name) {
    Objects.requireNonNull(name, "name");
    if (depth == 0 || scopes[depth - 1] != OBJECT) {
      throw new IllegalStateException("name(\"" + name + "\") where no member name is due");
    }
    separate();
    string(name);
    out.append(pretty ? ": " : ":");
    scopes[depth - 1] = MEMBER_VALUE;
    return this;
  }

  /** Writes a string, escaped; {@code null} is written as {@code null}. */
  public JsonWriter value(String value) {
    if (value == null) {
      return nullValue();
    }
    beforeValue();
    string(value);
    return this;
  }

  /** Writes a whole number. */
  public JsonWriter value(long value) {
    beforeValue();
    out.append(value);
    return this;
  }

  /**
   * Writes a number: whole values without a fraction, others in the shortest form that reads back
   * as the same double; NaN and the infinities as {@code null}.
   */
  public JsonWriter value(double value) {
    if (!Double.isFinite(value)) {
      return nullValue();
    }
    beforeValue();
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      out.append((long) value);
    } else {
      out.append(value); // Double.toString: digits, '.', digits, and maybe E and an exponent: JSON
    }
    return this;
  }

  /** Writes {@code true} or {@code false}. */
  public JsonWriter value(boolean value) {
    beforeValue();
    out.append(value);
    return this;
  }

  /** Writes {@code null}. */
  public JsonWriter nullValue() {
    beforeValue();
    out.append("null");
    return this;
  }

  /**
   * Writes {@code json}, one complete JSON value written by another writer (an array, an object, a
   * string, a number, a literal), as the next value, as it is. It is trusted, not parsed: only the
   * structure around it is checked.
   */
  public JsonWriter rawValue(String json) {
    Objects.requireNonNull(json, "json");
    beforeValue();
    out.append(json);
    return this;
  }

  /**
   * Returns the document.
   *
   * @throws IllegalStateException if nothing was written or an object or array is still open
   */
  public String toJson() {
    if (!written || depth > 0) {
      throw new IllegalStateException(
          written ? depth + " object(s) or array(s) still open" : "nothing written");
    }
    return out.toString();
  }

  /** What has been written so far, complete or not: for messages and debugging. */
  @Override
  public String toString() {
    return out.toString();
  }

  private void beforeValue() {
    if (depth == 0) {
      if (written) {
        throw new IllegalStateException("a JSON document holds one top-level value");
      }
      written = true;
      return;
    }
    byte scope = scopes[depth - 1];
    if (scope == OBJECT) {
      throw new IllegalStateException("a value in an object needs a name() first");
    }
    if (scope == MEMBER_VALUE) {
      scopes[depth - 1] = OBJECT;
      return;
    }
    separate();
  }

  /** Before an array element or an object member: the comma, and in pretty mode the line break. */
  private void separate() {
    if (!empty[depth - 1]) {
      out.append(',');
    }
    empty[depth - 1] = false;
    if (pretty) {
      newLine(depth);
    }
  }

  private void push(byte scope) {
    if (depth == scopes.length) {
      scopes = Arrays.copyOf(scopes, depth * 2);
      empty = Arrays.copyOf(empty, depth * 2);
    }
    scopes[depth] = scope;
    empty[depth] = true;
    depth++;
  }

  private JsonWriter close(char bracket) {
    depth--;
    if (pretty && !empty[depth]) {
      newLine(depth);
    }
    out.append(bracket);
    return this;
  }

  private void newLine(int indent) {
    out.append('\n');
    for (int i = 0; i < indent; i++) {
      out.append(INDENT);
    }
  }

  private void string(String s) {
    out.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (Character.isHighSurrogate(c)
              && i + 1 < n
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            out.append(c).append(s.charAt(++i)); // a well-formed pair: one code point, kept as is
          } else if (c < 0x20
              || (c >= 0x7f && c <= 0x9f)
              || c == '\u2028'
              || c == '\u2029'
              || Character.isSurrogate(c)) {
            unicodeEscape(c);
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  private void unicodeEscape(char c) {
    out.append("\\u")
        .append(HEX[(c >> 12) & 0xf])
        .append(HEX[(c >> 8) & 0xf])
        .append(HEX[(c >> 4) & 0xf])
        .append(HEX[c & 0xf]);
  }
}
