package io.bulkhead.scenarios;

import io.bulkhead.internal.JsonWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * What a load run measured: every request, and the summaries the experiment is judged by.
 *
 * @param samples every request, in the order they were sent
 * @param wallNanos from the first request sent to the last answer received
 */
public record LoadResult(List<Sample> samples, long wallNanos) {

  public LoadResult {
    samples = List.copyOf(samples);
  }

  /** Latency of the logins. */
  public Latency login() {
    return Latency.of(filter(Route.LOGIN, -1));
  }

  /** Latency of the chats answered 503: how fast the "no" came. */
  public Latency rejected() {
    return Latency.of(filter(Route.CHAT, 503));
  }

  /** Chats answered 200. */
  public int chatOk() {
    return filter(Route.CHAT, 200).size();
  }

  /** Chats answered 503. */
  public int chatRejected() {
    return filter(Route.CHAT, 503).size();
  }

  /** Chats with any other outcome: another status, or no answer at all. */
  public int chatOther() {
    return filter(Route.CHAT, -1).size() - chatOk() - chatRejected();
  }

  /** Logins that were not answered 200. */
  public int loginFailures() {
    return filter(Route.LOGIN, -1).size() - filter(Route.LOGIN, 200).size();
  }

  public double wallMs() {
    return Math.round(wallNanos / 100_000.0) / 10.0;
  }

  /**
   * Writes, into the object {@code out} has begun, {@code "login": {"p50_ms", "p99_ms", "max_ms"}}
   * (and {@code "failures"} when {@code loginFailures}), {@code "chat": {"200", "503", "other"}},
   * {@code "rejected": {"p50_ms", "p99_ms"}} and {@code "wall_ms"}; a latency with no samples is
   * null. The demo's report and the peer benchmark's both write these.
   */
  public void writeFields(JsonWriter out, boolean loginFailures) {
    Latency login = login();
    Latency rejected = rejected();
    out.name("login").beginObject();
    millis(out.name("p50_ms"), login.p50Ms());
    millis(out.name("p99_ms"), login.p99Ms());
    millis(out.name("max_ms"), login.maxMs());
    if (loginFailures) {
      out.name("failures").value(loginFailures());
    }
    out.endObject();
    out.name("chat")
        .beginObject()
        .name("200")
        .value(chatOk())
        .name("503")
        .value(chatRejected())
        .name("other")
        .value(chatOther())
        .endObject();
    out.name("rejected").beginObject();
    millis(out.name("p50_ms"), rejected.p50Ms());
    millis(out.name("p99_ms"), rejected.p99Ms());
    out.endObject();
    millis(out.name("wall_ms"), wallMs());
  }

  private static void millis(JsonWriter out, Double ms) {
    if (ms == null) {
      out.nullValue();
    } else {
      out.value(ms.doubleValue());
    }
  }

  private List<Sample> filter(Route route, int status) {
    List<Sample> out = new ArrayList<>();
    for (Sample s : samples) {
      if (s.route() == route && (status < 0 || s.status() == status)) {
        out.add(s);
      }
    }
    return out;
  }
}
