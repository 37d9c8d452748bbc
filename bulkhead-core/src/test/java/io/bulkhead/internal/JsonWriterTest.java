package io.bulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The one JSON writer: escaping of hostile strings, numbers JSON cannot hold, and structure. */
class JsonWriterTest {

  private static String string(String s) {
    return JsonWriter.compact().value(s).toJson();
  }

  @Test
  void quotesAndBackslashes_areEscaped() {
    assertThat(string("say \"hi\" \\ bye")).isEqualTo("\"say \\\"hi\\\" \\\\ bye\"");
    assertThat(string("\\\"")).isEqualTo("\"\\\\\\\"\"");
  }

  @Test
  void everyControlCharacter_isEscaped_theCommonOnesShort() {
    assertThat(string("\n\r\t\b\f")).isEqualTo("\"\\n\\r\\t\\b\\f\"");
    assertThat(string("\u0000\u0001\u001f")).isEqualTo("\"\\u0000\\u0001\\u001f\"");
    for (char c = 0; c < 0x20; c++) {
      assertThat(string(String.valueOf(c)))
          .as("U+%04X", (int) c)
          .startsWith("\"\\")
          .hasSizeBetween(4, 8);
    }
  }

  @Test
  void terminalEscapes_reachNoTerminalRaw() {
    // ESC [ 2 J clears a screen; U+009B is the one-character CSI; DEL and the C1 range likewise.
    assertThat(string("\u001b[2J\u009b31m\u007f\u0085"))
        .isEqualTo("\"\\u001b[2J\\u009b31m\\u007f\\u0085\"");
  }

  @Test
  void lineAndParagraphSeparators_areEscaped_forJavaScript() {
    assertThat(string("a\u2028b\u2029c")).isEqualTo("\"a\\u2028b\\u2029c\"");
  }

  @Test
  void loneSurrogates_areEscaped_whilePairsAndOtherTextPassAsTheyAre() {
    assertThat(string("\ud83d\ude00")).as("a pair: one emoji").isEqualTo("\"\ud83d\ude00\"");
    assertThat(string("x\ud83dy")).isEqualTo("\"x\\ud83dy\"");
    assertThat(string("\ude00\ud83d"))
        .as("low before high is two lone halves")
        .isEqualTo("\"\\ude00\\ud83d\"");
    assertThat(string("end\ud83d")).isEqualTo("\"end\\ud83d\"");
    assertThat(string("µs → ü </script> é")).isEqualTo("\"µs → ü </script> é\"");
  }

  @Test
  void names_areEscapedLikeValues() {
    assertThat(JsonWriter.compact().beginObject().name("a\"b\u0007").value(1).endObject().toJson())
        .isEqualTo("{\"a\\\"b\\u0007\":1}");
  }

  @Test
  void numbers_wholeWithoutFraction_nonFiniteAsNull() {
    String json =
        JsonWriter.compact()
            .beginArray()
            .value(3.0)
            .value(-0.0)
            .value(0.25)
            .value(1e-7)
            .value(1e20)
            .value(Long.MIN_VALUE)
            .value(Double.NaN)
            .value(Double.POSITIVE_INFINITY)
            .value(Double.NEGATIVE_INFINITY)
            .value((String) null)
            .value(true)
            .nullValue()
            .endArray()
            .toJson();
    assertThat(json)
        .isEqualTo(
            "[3,0,0.25,1.0E-7,1.0E20,-9223372036854775808,null,null,null,null," + "true,null]");
  }

  @Test
  void nesting_andPrettyPrinting() {
    JsonWriter w =
        JsonWriter.pretty()
            .beginObject()
            .name("a")
            .beginArray()
            .value(1)
            .beginObject()
            .endObject()
            .beginArray()
            .endArray()
            .endArray()
            .name("b")
            .value("x")
            .endObject();
    assertThat(w.toJson())
        .isEqualTo("{\n  \"a\": [\n    1,\n    {},\n    []\n  ],\n  \"b\": \"x\"\n}");
    assertThat(
            JsonWriter.compact()
                .beginObject()
                .name("a")
                .beginArray()
                .value(1)
                .value(2)
                .endArray()
                .name("b")
                .beginObject()
                .endObject()
                .endObject()
                .toJson())
        .isEqualTo("{\"a\":[1,2],\"b\":{}}");
  }

  @Test
  void deepNesting_growsTheStack() {
    JsonWriter w = JsonWriter.compact();
    for (int i = 0; i < 100; i++) {
      w.beginArray();
    }
    for (int i = 0; i < 100; i++) {
      w.endArray();
    }
    assertThat(w.toJson()).isEqualTo("[".repeat(100) + "]".repeat(100));
  }

  @Test
  void misuse_failsWhereItIsMade_withOneClearLine() {
    assertThatThrownBy(() -> JsonWriter.compact().beginObject().value(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("a value in an object needs a name() first");
    assertThatThrownBy(() -> JsonWriter.compact().beginArray().name("x"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("name(\"x\") where no member name is due");
    assertThatThrownBy(() -> JsonWriter.compact().beginObject().name("x").endObject())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("endObject() after a name with no value");
    assertThatThrownBy(() -> JsonWriter.compact().beginArray().endObject())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("endObject() with no object open");
    assertThatThrownBy(() -> JsonWriter.compact().beginObject().endArray())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("endArray() with no array open");
    assertThatThrownBy(() -> JsonWriter.compact().value(1).value(2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("a JSON document holds one top-level value");
    assertThatThrownBy(() -> JsonWriter.compact().beginArray().toJson())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("1 object(s) or array(s) still open");
    assertThatThrownBy(() -> JsonWriter.compact().toJson())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("nothing written");
  }
}
