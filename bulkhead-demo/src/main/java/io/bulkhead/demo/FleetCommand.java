package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.CliException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code demo fleet}: three app processes behind one llm compartment on Redis, one killed. */
@Command(
    name = "fleet",
    mixinStandardHelpOptions = true,
    header = "Three app processes behind one llm compartment on Redis; one is killed with kill -9.",
    description =
        "Runs the slow-upstream experiment's app (bulkhead mode) in three child JVMs whose "
            + "llm compartment is one fleet compartment on Redis: its limit holds across the three. "
            + "The slow upstream, in this process, counts the calls it works on itself, from every app; "
            + "its maximum is the oracle. Chats and logins are spread over the live apps; after "
            + "--kill-after one app is killed with kill -9 while it has calls at the upstream. Prints "
            + "the upstream's own maximum concurrency, the chats answered and refused, login p50/p99, "
            + "and the reclaim time, from the upstream's count: from the kill until the two other apps "
            + "had more calls at the upstream than they could while the killed app's leases lived (its "
            + "first slot in use again), and until they had the limit's worth at once (every slot). "
            + "Uses the Redis at --redis, or starts a redis-server of its own when none "
            + "answers there. About 30 s with the defaults. Child processes and its own redis-server "
            + "are removed on exit and on Ctrl-C.")
final class FleetCommand implements Callable<Integer> {

  private static final Duration SHORTEST_TTL = Duration.ofMillis(300);
  private static final int MOST_PER_SECOND = 1000;

  @Spec private CommandSpec spec;

  @Option(
      names = "--redis",
      defaultValue = "redis://127.0.0.1:6379",
      paramLabel = "URI",
      description =
          "The Redis the apps share. When none answers there, a redis-server of the run's"
              + " own is started on a free port (if one is installed). Default: ${DEFAULT-VALUE}.")
  String redis;

  @Option(
      names = "--limit",
      defaultValue = "10",
      paramLabel = "N",
      description =
          "The fleet compartment's limit: upstream calls in flight over all three apps."
              + " Default: ${DEFAULT-VALUE}.")
  int limit;

  @Option(
      names = "--duration",
      defaultValue = "24s",
      paramLabel = "DURATION",
      description = "How long the load runs. Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(
      names = "--kill-after",
      defaultValue = "8s",
      paramLabel = "DURATION",
      description =
          "When, from the start of the load, one app is killed. It must leave at least"
              + " two lease TTLs of load after it. Default: ${DEFAULT-VALUE}.")
  Duration killAfter;

  @Option(
      names = "--lease-ttl",
      defaultValue = "5s",
      paramLabel = "DURATION",
      description =
          "How long an app keeps admitting by its lease after its last sync with Redis; a"
              + " dead app's slots come back this plus its maxCallDuration (twice --delay) after"
              + " its last sync. Default: ${DEFAULT-VALUE}.")
  Duration leaseTtl;

  @Option(
      names = "--delay",
      defaultValue = "1s",
      paramLabel = "DURATION",
      description =
          "How long the upstream takes to answer; at most half of --lease-ttl. Each app's"
              + " maxCallDuration is twice this. Default: ${DEFAULT-VALUE}.")
  Duration delay;

  @Option(
      names = "--chats",
      defaultValue = "16",
      paramLabel = "PER_SECOND",
      description = "Chats per second over the live apps. Default: ${DEFAULT-VALUE}.")
  int chats;

  @Option(
      names = "--logins",
      defaultValue = "30",
      paramLabel = "PER_SECOND",
      description = "Logins per second over the live apps. Default: ${DEFAULT-VALUE}.")
  int logins;

  @Option(names = "--json", description = "Print the result as JSON instead of the table.")
  boolean json;

  @Override
  public Integer call() {
    FleetRun.Settings settings = Main.checked(spec, this::settings);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    FleetRun.Result r;
    try {
      r =
          FleetRun.run(
              settings,
              line -> {
                err.println(line);
                err.flush();
              });
    } catch (FleetRun.NoRedisException e) {
      err.println(Main.oneLine(spec.qualifiedName() + ": " + e.getMessage(), Main.LONGEST_LINE));
      err.flush();
      return Main.USAGE;
    }
    out.print(json ? json(r) : table(r));
    out.flush();
    return 0;
  }

  private FleetRun.Settings settings() {
    FleetRun.redisUri(redis);
    if (limit < 1) {
      throw new CliException("--limit must be at least 1 but was " + limit);
    }
    if (leaseTtl.compareTo(SHORTEST_TTL) < 0) {
      throw new CliException(
          "--lease-ttl must be at least "
              + Durations.format(SHORTEST_TTL)
              + " but was "
              + Durations.format(leaseTtl));
    }
    if (delay.isNegative() || delay.isZero() || delay.compareTo(leaseTtl.dividedBy(2)) > 0) {
      throw new CliException(
          "--delay must be above zero and at most half of --lease-ttl ("
              + Durations.format(leaseTtl.dividedBy(2))
              + ") but was "
              + Durations.format(delay)
              + ": a killed app's calls run on at the upstream until answered, and each app's"
              + " maxCallDuration is twice the delay");
    }
    if (killAfter.isNegative() || killAfter.isZero()) {
      throw new CliException(
          "--kill-after must be above zero but was " + Durations.format(killAfter));
    }
    Duration after = leaseTtl.multipliedBy(2);
    if (duration.minus(killAfter).compareTo(after) < 0) {
      throw new CliException(
          "--duration must leave at least two lease TTLs ("
              + Durations.format(after)
              + ") after --kill-after ("
              + Durations.format(killAfter)
              + ") for the reclaim to show, but"
              + " was "
              + Durations.format(duration));
    }
    if (chats < 1 || chats > MOST_PER_SECOND) {
      throw new CliException(
          "--chats must be from 1 to " + MOST_PER_SECOND + " per second but was " + chats);
    }
    if (logins < 1 || logins > MOST_PER_SECOND) {
      throw new CliException(
          "--logins must be from 1 to " + MOST_PER_SECOND + " per second but was " + logins);
    }
    return new FleetRun.Settings(
        redis,
        limit,
        io.bulkhead.scenarios.AppSettings.LLM_QUEUE,
        io.bulkhead.scenarios.AppSettings.LLM_WAIT,
        leaseTtl,
        delay,
        duration,
        killAfter,
        chats,
        logins);
  }

  /** The result as a table. */
  static String table(FleetRun.Result r) {
    StringBuilder sb = new StringBuilder();
    String row = "%-44s %s%n";
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "Redis",
            r.redis() + (r.ownRedis() ? " (started for this run)" : "")));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "fleet compartment llm",
            "limit "
                + r.settings().limit()
                + " over "
                + FleetRun.APPS
                + " app processes, lease TTL "
                + Durations.format(r.settings().leaseTtl())));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "upstream's own max concurrency",
            r.upstreamMax()
                + " (of "
                + r.upstreamCalls()
                + " calls; limit "
                + r.settings().limit()
                + ")"));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "chats answered / refused (503) / failed",
            r.chatsAnswered()
                + " / "
                + r.chatsRefused()
                + " / "
                + r.chatsFailed()
                + (r.chatsLost() > 0 ? " (+" + r.chatsLost() + " at the killed app)" : "")));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "login p50 / p99 (ms)",
            ms(r.loginP50Ms())
                + " / "
                + ms(r.loginP99Ms())
                + " ("
                + r.logins()
                + " answered, "
                + r.loginsFailed()
                + " failed"
                + (r.loginsLost() > 0 ? ", +" + r.loginsLost() + " at the killed app" : "")
                + ")"));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "kill -9",
            String.format(
                Locale.ROOT,
                "pid %d at %.1f s, with %d calls at the upstream",
                r.killedPid(),
                r.killedAtMs() / 1000,
                r.killedCalls())));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "reclaim, first slot (upstream's count)",
            r.firstBackMs() < 0
                ? "not within the run"
                : String.format(
                    Locale.ROOT,
                    "%.2f s: the others had more than %d calls at the upstream",
                    r.firstBackMs() / 1000,
                    r.settings().limit() - r.killedCalls())));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "reclaim, every slot (upstream's count)",
            r.allBackMs() < 0
                ? "not within the run (the others never filled all "
                    + r.settings().limit()
                    + " at once)"
                : String.format(
                    Locale.ROOT,
                    "%.2f s: the others had %d calls at the upstream",
                    r.allBackMs() / 1000,
                    r.settings().limit())));
    if (!r.failures().isEmpty()) {
      sb.append(
          String.format(
              Locale.ROOT, row, "failures at the live apps", String.join(", ", r.failures())));
    }
    return sb.toString();
  }

  private static String ms(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.1f", v);
  }

  /**
   * {@code {"redis", "own_redis", "limit", "lease_ttl_ms", "upstream": {"max_concurrency",
   * "calls"}, "chats": {"answered", "refused", "failed", "at_killed_app"}, "login": {"p50_ms",
   * "p99_ms", "answered", "failed", "at_killed_app"}, "kill": {"pid", "at_ms",
   * "calls_at_upstream"}, "reclaim": {"measured_by", "first_slot_ms", "every_slot_ms"}, "failures",
   * "app_pids"}}; a reclaim time is null when it did not happen within the run.
   */
  static String json(FleetRun.Result r) {
    JsonWriter w = JsonWriter.pretty().beginObject();
    w.name("redis").value(r.redis());
    w.name("own_redis").value(r.ownRedis());
    w.name("limit").value(r.settings().limit());
    w.name("lease_ttl_ms").value(r.settings().leaseTtl().toMillis());
    w.name("upstream")
        .beginObject()
        .name("max_concurrency")
        .value(r.upstreamMax())
        .name("calls")
        .value(r.upstreamCalls())
        .endObject();
    w.name("chats")
        .beginObject()
        .name("answered")
        .value(r.chatsAnswered())
        .name("refused")
        .value(r.chatsRefused())
        .name("failed")
        .value(r.chatsFailed())
        .name("at_killed_app")
        .value(r.chatsLost())
        .endObject();
    w.name("login").beginObject();
    num(w.name("p50_ms"), r.loginP50Ms());
    num(w.name("p99_ms"), r.loginP99Ms());
    w.name("answered")
        .value(r.logins())
        .name("failed")
        .value(r.loginsFailed())
        .name("at_killed_app")
        .value(r.loginsLost())
        .endObject();
    w.name("kill")
        .beginObject()
        .name("pid")
        .value(r.killedPid())
        .name("at_ms")
        .value(r.killedAtMs())
        .name("calls_at_upstream")
        .value(r.killedCalls())
        .endObject();
    w.name("reclaim").beginObject();
    w.name("measured_by").value("upstream");
    num(w.name("first_slot_ms"), r.firstBackMs() < 0 ? Double.NaN : r.firstBackMs());
    num(w.name("every_slot_ms"), r.allBackMs() < 0 ? Double.NaN : r.allBackMs());
    w.endObject();
    w.name("failures").beginArray();
    for (String f : r.failures()) {
      w.value(f);
    }
    w.endArray();
    w.name("app_pids").beginArray();
    for (long pid : r.appPids()) {
      w.value(pid);
    }
    w.endArray();
    return w.endObject().toJson() + "\n";
  }

  private static void num(JsonWriter w, double v) {
    if (Double.isNaN(v)) {
      w.nullValue();
    } else {
      w.value(v);
    }
  }
}
