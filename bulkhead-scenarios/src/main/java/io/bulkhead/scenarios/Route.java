package io.bulkhead.scenarios;

/** The two routes of the experiment. */
public enum Route {
  /** Calls the slow upstream. */
  CHAT("/chat"),
  /** Never calls the upstream. */
  LOGIN("/login");

  private final String path;

  Route(String path) {
    this.path = path;
  }

  public String path() {
    return path;
  }
}
