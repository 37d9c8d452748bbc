package io.bulkhead.demo;

import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.Durations;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.LastLines;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * The run behind {@code demo fleet}: a Redis (the given one, or a {@code redis-server} of its own),
 * the counting upstream in this process, three app JVMs whose {@code llm} compartment is one fleet
 * compartment on that Redis, an open-loop load of chats and logins spread over the live apps, and a
 * {@code kill -9} of one app mid-run.
 *
 * <p>Everything it starts is registered before anyone else sees it and removed by {@link
 * Leftovers#close}, at the end and from a shutdown hook on Ctrl-C; the apps also exit when their
 * standard input ends, so a parent killed without a chance to clean up leaves no JVM behind.
 */
final class FleetRun {

  static final int APPS = 3;
  private static final int VICTIM = APPS - 1;
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration REDIS_START_PATIENCE = Duration.ofSeconds(10);

  /** A ceiling, not an expectation: three JVMs starting at once on a busy 2-core host. */
  private static final Duration READY_PATIENCE = Duration.ofSeconds(120);

  private static final Duration EXIT_PATIENCE = Duration.ofSeconds(10);

  /** How long the kill may wait for the victim to hold calls at the upstream. */
  private static final Duration VICTIM_BUSY_PATIENCE = Duration.ofSeconds(10);

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final int WARM_UP_LOGINS = 50;
  private static final int KEPT_OUTPUT_LINES = 20;
  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(5);

  /**
   * What to run.
   *
   * @param redis the Redis URI the apps share
   * @param limit the fleet compartment's limit
   * @param queue callers of one app that may wait for a lease
   * @param maxWait how long one of them may wait
   * @param leaseTtl how long an app admits by its lease after its last sync with Redis
   * @param delay how long the upstream takes to answer
   * @param duration how long the load runs
   * @param killAfter when, from the start of the load, one app is killed
   * @param chatsPerSecond chats over all apps
   * @param loginsPerSecond logins over all apps
   */
  record Settings(
      String redis,
      int limit,
      int queue,
      Duration maxWait,
      Duration leaseTtl,
      Duration delay,
      Duration duration,
      Duration killAfter,
      int chatsPerSecond,
      int loginsPerSecond) {}

  /**
   * What happened.
   *
   * @param redis where the Redis was ({@code host:port})
   * @param ownRedis whether the run started its own {@code redis-server}
   * @param upstreamMax the most calls the upstream worked on at once, by its own count
   * @param upstreamCalls every call the upstream received
   * @param chatsAnswered chats answered 200
   * @param chatsRefused chats refused 503 (the fleet compartment full)
   * @param chatsFailed chats that failed otherwise at a live app
   * @param chatsLost chats in flight at the killed app when it died
   * @param logins logins answered 200
   * @param loginsFailed logins that failed at a live app
   * @param loginsLost logins in flight at the killed app when it died
   * @param loginP50Ms login latency, median, from when the login was due
   * @param loginP99Ms login latency, 99th percentile
   * @param killedPid the killed app's process id
   * @param killedAtMs when it was killed, from the start of the load
   * @param killedCalls the killed app's calls the upstream worked on at the kill
   * @param firstBackMs from the kill until the survivors had more calls at the upstream than they
   *     could while every lease of the killed app's calls lived (the first of its slots in use
   *     again), or -1 if not within the run
   * @param allBackMs from the kill until the survivors had {@code limit} calls at the upstream at
   *     once, or -1 if not within the run
   * @param appPids the process ids of the apps
   */
  record Result(
      Settings settings,
      String redis,
      boolean ownRedis,
      int upstreamMax,
      long upstreamCalls,
      int chatsAnswered,
      int chatsRefused,
      int chatsFailed,
      int chatsLost,
      int logins,
      int loginsFailed,
      int loginsLost,
      double loginP50Ms,
      double loginP99Ms,
      long killedPid,
      double killedAtMs,
      int killedCalls,
      double firstBackMs,
      double allBackMs,
      List<String> failures,
      List<Long> appPids) {
    Result {
      failures = List.copyOf(failures);
      appPids = List.copyOf(appPids);
    }
  }

  /** Thrown when no Redis answers and no {@code redis-server} can be started: a usage problem. */
  static final class NoRedisException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoRedisException(String message) {
      super(message);
    }
  }

  private FleetRun() {}

  /** Runs it; {@code log} hears what happens as it happens. */
  static Result run(Settings settings, Consumer<String> log) {
    Leftovers leftovers = new Leftovers();
    Thread hook = new Thread(leftovers::close, "demo-fleet-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return measure(settings, leftovers, log);
    } finally {
      leftovers.close();
      UpstreamCommand.removeHook(hook);
    }
  }

  private static Result measure(Settings settings, Leftovers leftovers, Consumer<String> log) {
    URI given = redisUri(settings.redis());
    String redisUri = settings.redis();
    boolean own = false;
    String where = given.getHost() + ":" + given.getPort();
    if (!answersPing(given.getHost(), given.getPort())) {
      Path server = onPath("redis-server");
      if (server == null) {
        throw new NoRedisException(
            "no Redis answers at "
                + where
                + " and redis-server is not on"
                + " the PATH to start one: start Redis or point --redis at one");
      }
      int port = freePort();
      startRedis(server, port, leftovers);
      redisUri = "redis://127.0.0.1:" + port;
      where = "127.0.0.1:" + port;
      own = true;
      log.accept(
          "no Redis answers at "
              + given.getHost()
              + ":"
              + given.getPort()
              + "; started redis-server on "
              + where
              + " for this run");
    } else {
      log.accept("Redis at " + where);
    }

    CountingUpstream upstream =
        leftovers.upstream(new CountingUpstream(APPS, settings.delay(), settings.limit()));
    List<Child> apps = new ArrayList<>();
    for (int i = 0; i < APPS; i++) { // all at once: a JVM's start is mostly waiting for the CPU
      apps.add(
          Child.start(
              i,
              List.of(
                  redisUri,
                  Integer.toString(settings.limit()),
                  Integer.toString(settings.queue()),
                  Long.toString(settings.maxWait().toMillis()),
                  Long.toString(settings.leaseTtl().toMillis()),
                  // the app's calls end when the upstream answers: its delay, twice over for margin
                  Long.toString(settings.delay().multipliedBy(2).toMillis()),
                  upstream.uri(i).toString()),
              leftovers));
    }
    for (int i = 0; i < APPS; i++) {
      apps.get(i).awaitReady("app " + (i + 1));
    }
    List<URI> targets = new ArrayList<>();
    for (Child app : apps) {
      targets.add(app.uri());
    }
    log.accept(
        "upstream answering after "
            + Durations.format(settings.delay())
            + "; apps "
            + apps.stream().map(c -> "pid " + c.process.pid() + " at " + c.uri()).toList()
            + "; one llm compartment of limit "
            + settings.limit()
            + " on Redis, lease TTL "
            + Durations.format(settings.leaseTtl()));

    Load load = new Load(targets, settings, leftovers);
    load.warmUp();
    log.accept(
        "load for "
            + Durations.format(settings.duration())
            + ": "
            + settings.chatsPerSecond()
            + " chats/s and "
            + settings.loginsPerSecond()
            + " logins/s over the live apps; kill -9 of"
            + " app "
            + (VICTIM + 1)
            + " after "
            + Durations.format(settings.killAfter()));
    long start = load.begin();
    sleepUntil(start + settings.killAfter().toNanos());
    long busyBy = System.nanoTime() + VICTIM_BUSY_PATIENCE.toNanos();
    while (upstream.inFlight(VICTIM) == 0 && System.nanoTime() - busyBy < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // polling the upstream's count
    }
    Child victim = apps.get(VICTIM);
    load.remove(VICTIM); // a load balancer takes the dead instance out of rotation
    int held = upstream.markKill(VICTIM);
    long killedAt = System.nanoTime();
    victim.process.destroyForcibly(); // SIGKILL on Linux and macOS: kill -9
    log.accept(
        String.format(
            java.util.Locale.ROOT,
            "kill -9 app %d (pid %d) at %.1f s, while the upstream worked on %d of its calls",
            VICTIM + 1,
            victim.process.pid(),
            (killedAt - start) / 1e9,
            held));
    sleepUntil(start + settings.duration().toNanos());
    List<Call> calls = load.stop();
    OptionalLong firstBack = upstream.firstBackNanos();
    OptionalLong allBack = upstream.allBackNanos();
    java.util.Map<String, Integer> failures = new java.util.TreeMap<>();

    int chatsAnswered = 0;
    int chatsRefused = 0;
    int chatsFailed = 0;
    int chatsLost = 0;
    int loginsFailed = 0;
    int loginsLost = 0;
    Histogram logins = new Histogram(HIGHEST_MICROS, 3);
    for (Call c : calls) {
      boolean lost = c.app() == VICTIM && c.status() != 200 && c.status() != 503;
      if (c.chat()) {
        if (c.status() == 200) {
          chatsAnswered++;
        } else if (c.status() == 503) {
          chatsRefused++;
        } else if (lost) {
          chatsLost++;
        } else {
          chatsFailed++;
          failures.merge("chat " + c.outcome(), 1, Integer::sum);
        }
      } else if (c.status() == 200) {
        logins.recordValue(
            Math.min(HIGHEST_MICROS, Math.max(1, TimeUnit.NANOSECONDS.toMicros(c.latencyNanos()))));
      } else if (lost) {
        loginsLost++;
      } else {
        loginsFailed++;
        failures.merge("login " + c.outcome(), 1, Integer::sum);
      }
    }
    return new Result(
        settings,
        where,
        own,
        upstream.maxConcurrency(),
        upstream.calls(),
        chatsAnswered,
        chatsRefused,
        chatsFailed,
        chatsLost,
        (int) logins.getTotalCount(),
        loginsFailed,
        loginsLost,
        millis(logins, 50),
        millis(logins, 99),
        victim.process.pid(),
        (killedAt - start) / 1e6,
        held,
        firstBack.isPresent() ? firstBack.getAsLong() / 1e6 : -1,
        allBack.isPresent() ? allBack.getAsLong() / 1e6 : -1,
        failures.entrySet().stream().map(e -> e.getKey() + " x" + e.getValue()).toList(),
        apps.stream().map(c -> c.process.pid()).toList());
  }

  private static double millis(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1000.0;
  }

  private static void sleepUntil(long deadline) {
    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left); // keeping the run's schedule, not waiting for an event
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Redis

  /** {@code redis://host:port}, checked; a malformed one is a usage error naming --redis. */
  static URI redisUri(String redis) {
    URI uri;
    try {
      uri = URI.create(redis);
    } catch (IllegalArgumentException e) {
      throw new CliException(
          "--redis must be a Redis URI like redis://127.0.0.1:6379 but was '" + redis + "'");
    }
    if (!"redis".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 1) {
      throw new CliException(
          "--redis must be a Redis URI with a host and a port, like"
              + " redis://127.0.0.1:6379, but was '"
              + redis
              + "'");
    }
    return uri;
  }

  /** Whether a Redis answers at host:port: any RESP reply to PING (+PONG, or -NOAUTH) counts. */
  static boolean answersPing(String host, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), (int) PROBE_TIMEOUT.toMillis());
      socket.setSoTimeout((int) PROBE_TIMEOUT.toMillis());
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      int first = socket.getInputStream().read();
      return first == '+' || first == '-';
    } catch (IOException e) {
      return false;
    }
  }

  private static Path onPath(String program) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, program);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new CliException("cannot find a free port for redis-server: " + e.getMessage(), e);
    }
  }

  private static void startRedis(Path server, int port, Leftovers leftovers) {
    // No persistence: the run's leases are worth nothing after it. noeviction, as the fleet needs.
    ProcessBuilder builder =
        new ProcessBuilder(
                server.toString(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--maxmemory-policy",
                "noeviction")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    Process redis;
    try {
      redis = leftovers.start(builder);
    } catch (IOException e) {
      throw new CliException("cannot start " + server + ": " + e.getMessage(), e);
    }
    long by = System.nanoTime() + REDIS_START_PATIENCE.toNanos();
    while (!answersPing("127.0.0.1", port)) {
      if (!redis.isAlive()) {
        throw new CliException(
            "redis-server on port "
                + port
                + " exited with "
                + redis.exitValue()
                + " before it answered");
      }
      if (System.nanoTime() - by > 0) {
        throw new CliException(
            "redis-server on port "
                + port
                + " did not answer within "
                + Durations.format(REDIS_START_PATIENCE));
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // polling a starting server
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Processes

  /**
   * What the run started: processes and the upstream. {@link #close} is idempotent and may run from
   * the shutdown hook while the run's thread still starts things: whatever is started after it is
   * stopped at once.
   */
  static final class Leftovers {
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Process> processes = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private boolean closed;

    Process start(ProcessBuilder builder) throws IOException {
      lock.lock();
      try {
        if (closed) {
          throw new CliException("the run is over");
        }
        Process p = builder.start();
        processes.add(p);
        return p;
      } finally {
        lock.unlock();
      }
    }

    <T extends AutoCloseable> T upstream(T closeable) {
      lock.lock();
      try {
        closeables.add(closeable);
        if (closed) {
          closeQuietly(closeable);
          throw new CliException("the run is over");
        }
        return closeable;
      } finally {
        lock.unlock();
      }
    }

    /**
     * Ends every process (SIGKILL: nothing of the run is worth a graceful stop) and closes the
     * rest.
     */
    void close() {
      List<Process> toKill;
      List<AutoCloseable> toClose;
      lock.lock();
      try {
        closed = true;
        toKill = List.copyOf(processes);
        toClose = List.copyOf(closeables);
      } finally {
        lock.unlock();
      }
      for (Process p : toKill) {
        p.destroyForcibly();
      }
      for (Process p : toKill) {
        try {
          p.onExit().get(EXIT_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
          System.getLogger("io.bulkhead.demo")
              .log(System.Logger.Level.WARNING, "process " + p.pid() + " did not end: " + e);
        }
      }
      for (AutoCloseable c : toClose) {
        closeQuietly(c);
      }
    }

    private static void closeQuietly(AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        System.getLogger("io.bulkhead.demo").log(System.Logger.Level.DEBUG, "closing " + c, e);
      }
    }
  }

  /**
   * An app JVM and a thread that reads what it prints: the reader is the only writer of {@code
   * ready} (completed once) and of the kept lines (under their lock).
   */
  private static final class Child {
    final Process process;
    private final CompletableFuture<Integer> ready = new CompletableFuture<>();
    private final LastLines lastLines = new LastLines(KEPT_OUTPUT_LINES);

    private Child(Process process) {
      this.process = process;
    }

    static Child start(int index, List<String> args, Leftovers leftovers) {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx256m");
      command.add("-XX:+UseSerialGC");
      // C1 only: the apps start sooner and leave the CPU to each other; a demo's load does not need
      // C2.
      command.add("-XX:TieredStopAtLevel=1");
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(FleetApp.class.getName());
      command.addAll(args);
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      String name = "app " + (index + 1);
      Child child;
      try {
        child = new Child(leftovers.start(builder));
      } catch (IOException e) {
        throw new CliException("cannot start the " + name + " JVM: " + e.getMessage(), e);
      }
      DaemonThreads.start("fleet-app-" + (index + 1) + "-output", child::read);
      return child;
    }

    void awaitReady(String name) {
      try {
        ready.get(READY_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CliException("interrupted while the " + name + " JVM started");
      } catch (ExecutionException e) {
        throw new CliException("the " + name + " JVM did not start: " + lastLines);
      } catch (TimeoutException e) {
        throw new CliException(
            "the "
                + name
                + " JVM did not start within "
                + Durations.format(READY_PATIENCE)
                + ": "
                + lastLines);
      }
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + ready.join());
    }

    private void read() {
      try (BufferedReader in =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith(FleetApp.READY)) {
            ready.complete(Integer.parseInt(line.substring(FleetApp.READY.length()).trim()));
          } else if (line.equals(FleetApp.NOT_CONNECTED)) {
            ready.completeExceptionally(new IOException("Redis did not answer the app"));
          }
          keep(line);
        }
      } catch (IOException | UncheckedIOException | NumberFormatException e) {
        keep(e.toString());
      }
      ready.completeExceptionally(new IOException("the process ended"));
    }

    private void keep(String line) {
      lastLines.add(line);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Load

  /**
   * One request: chat or login, which app, how long from when it was due, its status (-1: none,
   * then {@code failure} names the exception).
   */
  record Call(boolean chat, int app, long latencyNanos, int status, String failure) {
    String outcome() {
      return status >= 0 ? Integer.toString(status) : failure;
    }
  }

  /**
   * Open-loop load: one pacer thread per route computes due times and sends each request
   * asynchronously to the next live app, round robin; a stalled app does not slow the load, and a
   * latency counts from when its request was due. Outcomes go to a concurrent queue; {@link #stop}
   * stops the pacers, then waits (bounded) for every request sent, and only then reads the queue.
   */
  private static final class Load {
    private final List<URI> targets;
    private final boolean[] live;
    private final ReentrantLock liveLock = new ReentrantLock();
    private final Settings settings;
    private final ExecutorService executor =
        Executors.newCachedThreadPool(DaemonThreads.named("fleet-load"));
    private final HttpClient client;
    private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CompletableFuture<?>> sent = new ConcurrentLinkedQueue<>();
    private final AtomicInteger next = new AtomicInteger();
    private final List<Thread> pacers = new ArrayList<>();
    private volatile boolean stopping;

    Load(List<URI> targets, Settings settings, Leftovers leftovers) {
      this.targets = List.copyOf(targets);
      this.live = new boolean[targets.size()];
      java.util.Arrays.fill(live, true);
      this.settings = settings;
      this.client =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(2))
              .executor(executor)
              .build();
      // The client's own threads end with its executor (HttpClient.shutdownNow is Java 21).
      leftovers.upstream(executor::shutdownNow);
    }

    /**
     * Logins to every app, one at a time, forgotten: the JIT's first compilations are not measured.
     */
    void warmUp() {
      for (URI target : targets) {
        HttpRequest login =
            HttpRequest.newBuilder(target.resolve("/login")).timeout(REQUEST_TIMEOUT).build();
        for (int i = 0; i < WARM_UP_LOGINS; i++) {
          try {
            client.send(login, HttpResponse.BodyHandlers.discarding());
          } catch (IOException failed) {
            // the measured load counts failures; a warm-up call says nothing yet
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }

    /** Starts the pacers; returns the start, in {@link System#nanoTime()}. */
    long begin() {
      long start = System.nanoTime();
      pacers.add(pacer(true, settings.chatsPerSecond(), start));
      pacers.add(pacer(false, settings.loginsPerSecond(), start));
      return start;
    }

    /** Takes app {@code app} out of rotation. */
    void remove(int app) {
      liveLock.lock();
      try {
        live[app] = false;
      } finally {
        liveLock.unlock();
      }
    }

    private int nextLive() {
      liveLock.lock();
      try {
        for (int tries = 0; tries < live.length; tries++) {
          int i = Math.floorMod(next.getAndIncrement(), live.length);
          if (live[i]) {
            return i;
          }
        }
        throw new IllegalStateException("no app is live");
      } finally {
        liveLock.unlock();
      }
    }

    private Thread pacer(boolean chat, int perSecond, long start) {
      long interval = TimeUnit.SECONDS.toNanos(1) / perSecond;
      return DaemonThreads.start(
          chat ? "fleet-pace-chat" : "fleet-pace-login",
          () -> {
            for (long due = start; !stopping; due += interval) {
              sleepUntil(due);
              if (stopping) {
                return;
              }
              send(chat, nextLive(), due);
            }
          });
    }

    private void send(boolean chat, int app, long due) {
      HttpRequest request =
          HttpRequest.newBuilder(targets.get(app).resolve(chat ? "/chat" : "/login"))
              .timeout(REQUEST_TIMEOUT)
              .build();
      sent.add(
          client
              .sendAsync(request, HttpResponse.BodyHandlers.discarding())
              .whenComplete(
                  (response, failure) ->
                      calls.add(
                          new Call(
                              chat,
                              app,
                              System.nanoTime() - due,
                              failure == null ? response.statusCode() : -1,
                              failure == null ? "" : cause(failure).getClass().getSimpleName()))));
    }

    private static Throwable cause(Throwable failure) {
      return failure instanceof java.util.concurrent.CompletionException
              && failure.getCause() != null
          ? failure.getCause()
          : failure;
    }

    /** Stops sending, waits (bounded) for every request sent, and returns every outcome. */
    List<Call> stop() {
      stopping = true;
      for (Thread pacer : pacers) {
        try {
          pacer.join(EXIT_PATIENCE.toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      try {
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new))
            .get(REQUEST_TIMEOUT.plus(EXIT_PATIENCE).toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // a failed request is an outcome in the queue; one still running past the patience is not
      }
      return List.copyOf(calls);
    }
  }
}
