package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet's promises under every fault, on real processes: three worker JVMs (FleetWorker) share
 * one compartment of limit 6 that fails closed, each reaching a redis-server of the test's own
 * through a proxy of its own, and calling a dependency that counts the calls open on it (the
 * oracle). One fault after another, each healed before the next: one process cut off from Redis,
 * every process cut off, request bytes dropped, a slow link, a process stopped with SIGSTOP past
 * its lease, Redis killed with and without its data, Redis back with an ACL that refuses SUBSCRIBE,
 * a process killed with SIGKILL. For each, the test records the most calls the dependency saw at
 * once, the longest any caller waited for its admission (or its refusal), and the clients connected
 * to Redis once the fleet recovered; it fails on any call beyond the limit, any caller kept waiting
 * for Redis, and any connection left open.
 */
class FleetFaultTest {

  private static final int LIMIT = FleetWorker.LIMIT;
  // A caller that waited for a round trip to Redis would wait at least 1 s (the slow link) or the
  // command timeout (1.5 s); a caller that does not is kept by this machine's scheduling only.
  private static final Duration SLACK = Duration.ofMillis(600);
  private static final Duration TERM = FleetWorker.LEASE_TTL.plus(FleetWorker.MAX_CALL);
  private static final List<String> JVM_OPTIONS =
      List.of("-Xmx128m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");
  private static final List<String> ACL_WITHOUT_SUBSCRIBE =
      List.of(
          "--user",
          "default",
          "on",
          "nopass",
          "~*",
          "&*",
          "+@all",
          "-subscribe",
          "-psubscribe",
          "-ssubscribe");

  private final List<Process> processes = new ArrayList<>();
  private final List<FaultProxy> proxies = new ArrayList<>();
  private RedisServerProcess redis;

  /** One worker JVM and the proxy it reaches Redis through. */
  private record Worker(String tag, FaultProxy proxy, WorkerJvms.Started jvm) {

    String ask(String command, String answer) throws Exception {
      jvm.process().getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
      jvm.process().getOutputStream().flush();
      return WorkerJvms.lineStartingWith(jvm.lines(), answer, Duration.ofSeconds(60));
    }

    /**
     * "STATE inFallback admitted refused leasesLost callsOverran reconnects fallbackSwitches
     * syncsAnswered", as fields 1 to 8.
     */
    String[] state() throws Exception {
      return ask("STATE", "STATE ").split(" ");
    }
  }

  /** One fault's outcome. */
  private record Row(
      String fault,
      int dependencyMax,
      long callWaitMs,
      long tryAcquireMs,
      long submitReturnMs,
      long submitRefusalMs,
      int clientsAfter,
      int live,
      String notes) {}

  @FunctionalInterface
  private interface Fault {
    /** Injects the fault, lets it last, and heals it. */
    void run(List<Worker> live) throws Exception;
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly(); // SIGKILL ends a stopped process too
      p.waitFor(10, TimeUnit.SECONDS);
    }
    for (FaultProxy p : proxies) {
      p.close();
    }
    if (redis != null) {
      redis.stop();
    }
  }

  @Test
  void theFleetNeverExceedsItsLimitNorKeepsACallerWaitingForRedisThroughEveryFault(
      @TempDir Path dir) throws Exception {
    int port = RedisServerProcess.freePort();
    redis =
        RedisServerProcess.persistent(port, Files.createDirectories(dir.resolve("aof"))).start();
    List<Row> rows = new ArrayList<>();
    try (CountingDependency dependency = new CountingDependency(20)) {
      List<Worker> live = new ArrayList<>();
      for (String tag : List.of("A", "B", "C")) {
        FaultProxy proxy = new FaultProxy(port);
        proxies.add(proxy);
        WorkerJvms.Started jvm =
            WorkerJvms.start(
                JVM_OPTIONS,
                FleetWorker.class,
                proxy.uri(),
                "llm",
                Integer.toString(dependency.port()),
                tag);
        processes.add(jvm.process());
        live.add(new Worker(tag, proxy, jvm));
      }
      for (Worker w : live) {
        // The bound includes starting three JVMs on a loaded 2-core host.
        WorkerJvms.lineStartingWith(w.jvm.lines(), "STARTED", Duration.ofSeconds(180));
      }
      awaitRecovered(live); // a fresh server grants nothing for one term after it started
      pause(Duration.ofSeconds(5)); // the workers' JIT warms up before anything is measured

      rows.add(
          phase(
              "none (steady load)",
              live,
              dependency,
              l -> {
                pause(Duration.ofSeconds(3));
              }));
      rows.add(
          phase(
              "one process cut off from Redis for 5 s (hold), calls of 800 ms",
              live,
              dependency,
              l -> {
                for (Worker w : l) {
                  w.ask("SERVICE 800", "SERVICE");
                }
                pause(Duration.ofSeconds(1)); // long calls run everywhere
                l.get(0).proxy.hold();
                pause(Duration.ofSeconds(5)); // past its lease TTL and its term: others take over
                l.get(0).proxy.heal();
                for (Worker w : l) {
                  w.ask("SERVICE 20", "SERVICE");
                }
              }));
      rows.add(
          phase(
              "every process cut off for 5 s (hold)",
              live,
              dependency,
              l -> {
                l.forEach(w -> w.proxy.hold());
                pause(Duration.ofSeconds(5));
                l.forEach(w -> w.proxy.heal());
              }));
      rows.add(
          phase(
              "request bytes dropped for 1 s",
              live,
              dependency,
              l -> {
                l.forEach(w -> w.proxy.dropRequests());
                pause(Duration.ofSeconds(1));
                l.forEach(w -> w.proxy.heal());
              }));
      rows.add(
          phase(
              "slow link, 500 ms each way, for 4 s",
              live,
              dependency,
              l -> {
                l.forEach(w -> w.proxy.slow(500));
                pause(Duration.ofSeconds(4));
                l.forEach(w -> w.proxy.heal());
              }));
      rows.add(
          phase(
              "one process stopped (SIGSTOP) for 6 s",
              live,
              dependency,
              l -> {
                Worker stopped = l.get(1);
                assertThat(stopped.ask("PAUSE", "HOLDING "))
                    .as("no call between admission and request")
                    .isEqualTo("HOLDING 4");
                signal("STOP", stopped.jvm.process());
                dependency.releaseHeld(); // the dependency ends them while the process sleeps
                pause(TERM.plusSeconds(2)); // past its lease and its term: others take over
                signal("CONT", stopped.jvm.process());
                stopped.ask("RESUME 20", "RESUMED");
              }));
      rows.add(
          phase(
              "Redis killed (SIGKILL) for 5 s, restarted with its data",
              live,
              dependency,
              l -> {
                redis.stop();
                pause(Duration.ofSeconds(5));
                redis.start(); // same port, same append-only file
              }));
      rows.add(
          phase(
              "Redis killed (SIGKILL) for 1 s, restarted without its data",
              live,
              dependency,
              l -> {
                redis.stop();
                pause(Duration.ofSeconds(1));
                redis =
                    new RedisServerProcess(
                            port, "--dir", Files.createDirectories(dir.resolve("empty")).toString())
                        .start();
              }));
      rows.add(
          phase(
              "Redis restarted empty with an ACL that refuses SUBSCRIBE",
              live,
              dependency,
              l -> {
                redis.stop();
                redis = new RedisServerProcess(port, ACL_WITHOUT_SUBSCRIBE.toArray(String[]::new));
                redis.start();
              }));
      rows.add(
          phase(
              "one process killed (SIGKILL)",
              live,
              dependency,
              l -> {
                Worker killed = l.remove(2);
                killed.jvm.process().destroyForcibly();
                assertThat(killed.jvm.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
                pause(TERM.plusSeconds(2)); // its slots come back one term after its last sync
              }));

      for (Worker w : live) {
        w.ask("STOP", "STOPPED");
        assertThat(w.jvm.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
      }
      System.out.println(table(rows));
      assertThat(dependency.served()).isPositive();
    }
    for (Row r : rows) {
      assertThat(r.dependencyMax())
          .as("calls the dependency saw at once: " + r.fault())
          .isLessThanOrEqualTo(LIMIT);
      long maxWait = FleetWorker.MAX_WAIT.toMillis();
      assertThat(r.callWaitMs())
          .as("longest call() wait: " + r.fault())
          .isLessThanOrEqualTo(maxWait + SLACK.toMillis());
      assertThat(r.tryAcquireMs())
          .as("longest tryAcquire(): " + r.fault())
          .isLessThanOrEqualTo(SLACK.toMillis());
      assertThat(r.submitReturnMs())
          .as("longest submit() return: " + r.fault())
          .isLessThanOrEqualTo(SLACK.toMillis());
      assertThat(r.submitRefusalMs())
          .as("longest wait for a refused submit(): " + r.fault())
          .isLessThanOrEqualTo(maxWait + SLACK.toMillis());
      assertThat(r.clientsAfter())
          .as("clients connected to Redis after: " + r.fault())
          .isLessThanOrEqualTo(2 * r.live());
    }
  }

  /**
   * Runs one fault: resets the dependency's maximum and the workers' waits, injects, heals, waits
   * until every worker admits by its lease again, and reads the outcome.
   */
  private Row phase(String name, List<Worker> live, CountingDependency dependency, Fault fault)
      throws Exception {
    for (Worker w : live) {
      w.ask("REPORT", "REPORT ");
    }
    List<Worker> before = new ArrayList<>(live);
    List<String[]> stateBefore = new ArrayList<>();
    for (Worker w : before) {
      stateBefore.add(w.state());
    }
    dependency.resetMax();
    fault.run(live);
    awaitRecovered(live);
    int most = dependency.resetMax();
    StringBuilder notes = new StringBuilder();
    for (int i = 0; i < before.size(); i++) {
      Worker w = before.get(i);
      if (!live.contains(w)) {
        notes.append(w.tag).append(": killed; ");
        continue;
      }
      String[] a = stateBefore.get(i);
      String[] b = w.state();
      String[] what = {"", "", "", "", "lease lost", "overran", "reconnects", "fallback"};
      StringBuilder mine = new StringBuilder();
      for (int f = 4; f <= 7; f++) {
        long d = Long.parseLong(b[f]) - Long.parseLong(a[f]);
        if (d > 0) {
          mine.append(mine.length() == 0 ? "" : ", ").append(what[f]).append(' ').append(d);
        }
      }
      if (mine.length() > 0) {
        notes.append(w.tag).append(": ").append(mine).append("; ");
      }
    }
    long call = 0;
    long tryAcquire = 0;
    long submit = 0;
    long refusal = 0;
    for (Worker w : live) {
      String[] r = w.ask("REPORT", "REPORT ").split(" ");
      call = Math.max(call, Long.parseLong(r[1]));
      tryAcquire = Math.max(tryAcquire, Long.parseLong(r[2]));
      submit = Math.max(submit, Long.parseLong(r[3]));
      refusal = Math.max(refusal, Long.parseLong(r[4]));
    }
    int clients = redis.connectedClients();
    Row row =
        new Row(
            name,
            most,
            call / 1000,
            tryAcquire / 1000,
            submit / 1000,
            refusal / 1000,
            clients,
            live.size(),
            notes.toString().trim());
    System.out.println("fault: " + row);
    return row;
  }

  /**
   * Until every worker admits by its lease, has admitted calls, and Redis answered its syncs since
   * this began: the fleet recovered. Bounded: a fleet that does not recover fails the test.
   */
  private static void awaitRecovered(List<Worker> live) throws Exception {
    long[] admitted = new long[live.size()];
    long[] syncs = new long[live.size()];
    for (int i = 0; i < live.size(); i++) {
      String[] s = live.get(i).state();
      admitted[i] = Long.parseLong(s[2]);
      syncs[i] = Long.parseLong(s[8]);
    }
    long by = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    for (int i = 0; i < live.size(); i++) {
      for (; ; ) {
        String[] s = live.get(i).state();
        if (s[1].equals("false")
            && Long.parseLong(s[2]) > admitted[i]
            && Long.parseLong(s[8]) > syncs[i] + 1) {
          break; // admitting by its lease, and Redis answered two syncs since this began
        }
        assertThat(System.nanoTime() - by < 0)
            .as("worker " + live.get(i).tag + " recovered: " + String.join(" ", s))
            .isTrue();
        pause(Duration.ofMillis(100)); // polling an observable state, bounded above
      }
    }
  }

  private static void pause(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis()); // how long the fault lasts: the subject, not an ordering device
  }

  private static void signal(String signal, Process process) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -" + signal).isZero();
  }

  private static String table(List<Row> rows) {
    StringBuilder t = new StringBuilder();
    t.append("| fault | dependency max (limit ")
        .append(LIMIT)
        .append(") | longest wait: call / tryAcquire / submit returns / submit refused (maxWait ")
        .append(FleetWorker.MAX_WAIT.toMillis())
        .append(" ms) | Redis clients after (processes) | notes |\n|---|---|---|---|---|\n");
    for (Row r : rows) {
      t.append("| ")
          .append(r.fault())
          .append(" | ")
          .append(r.dependencyMax())
          .append(" | ")
          .append(r.callWaitMs())
          .append(" / ")
          .append(r.tryAcquireMs())
          .append(" / ")
          .append(r.submitReturnMs())
          .append(" / ")
          .append(r.submitRefusalMs())
          .append(" ms | ")
          .append(r.clientsAfter())
          .append(" (")
          .append(r.live())
          .append(") | ")
          .append(r.notes())
          .append(" |\n");
    }
    return t.toString();
  }
}
