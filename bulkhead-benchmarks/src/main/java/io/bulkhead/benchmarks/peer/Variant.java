package io.bulkhead.benchmarks.peer;

/** How the experiment's app guards {@code /chat}; everything else about the app is the same. */
enum Variant {
  /** The demo's bulkhead mode: our compartment {@code llm} and its own capped client. */
  BULKHEAD("bulkhead", "Bulkhead"),
  /** The same app with {@code /chat} inside Resilience4j's {@code SemaphoreBulkhead}. */
  RESILIENCE4J("resilience4j", "Resilience4j");

  private final String key;
  private final String title;

  Variant(String key, String title) {
    this.key = key;
    this.title = title;
  }

  /** The variant's key in {@code peer.json}. */
  String key() {
    return key;
  }

  /** The variant's name in tables and charts. */
  String title() {
    return title;
  }
}
