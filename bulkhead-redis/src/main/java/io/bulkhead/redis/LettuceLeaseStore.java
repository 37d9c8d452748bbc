package io.bulkhead.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/*
 * The lease store on Redis, through Lettuce.
 *
 * Algorithm
 * ---------
 * Per compartment four keys share one hash tag, so a cluster keeps them on one slot:
 *   {bulkhead:NAME}:leases  sorted set, lease id -> expiry in milliseconds of the server's TIME
 *   {bulkhead:NAME}:fence   the fencing counter, INCR once per grant
 *   {bulkhead:NAME}:epoch   the TIME at which this state was born; a new value means the old was lost
 *   {bulkhead:NAME}:limit   the fleet's limit: written by the latest build or setLimit of any process
 *                           (publishLimit), read by every admission; an admission that finds it
 *                           missing (the data was lost) writes its own process's limit
 * Each operation is one script, so each is atomic on the server and costs one round trip. The server's
 * TIME is the only clock: a process sends durations, never instants, so clock skew between hosts
 * cannot lengthen or shorten a lease.
 *
 * Scripts run by EVALSHA. A server restarted without its script cache answers NOSCRIPT; the call is then
 * repeated once with EVAL, which runs the script and loads it again (counted in scriptReloads).
 *
 * Connections: one command connection and one pub/sub connection, both on one RedisClient configured
 * for a bulkhead (short command timeout, commands rejected at once while disconnected, a bounded
 * request queue). Connecting gets a longer timeout of its own: it is off every caller's path, and a
 * JVM's first connection also starts Netty, which missed a 500 ms bound on a busy host. If Redis does
 * not answer, the store is created anyway and connects from the fleet's scheduler (connectIfNeeded,
 * every poll); every operation until then throws StoreUnavailable. The subscription is optional: it
 * only wakes waiters sooner than the poll, so a refused SUBSCRIBE closes its connection, is logged
 * once and is retried with a back-off, while commands go on. A watchdog closes both connections after
 * WATCHDOG_TIMEOUTS commands in a row timed out (a connection that lost request bytes stays up while
 * no reply ever pairs with its command again), and connectIfNeeded opens new ones.
 *
 * Races
 * -----
 *   R1 connect vs use. `commands` is set by connectIfNeeded (on the fleet's single scheduler thread or
 *      the constructor); an operation reads it once: null means unavailable.
 *   R2 close or watchdog vs use. Both null `commands` before closing the connections (the watchdog by
 *      CAS from the connection that timed out, so two threads that see the K-th time-out close it once);
 *      an operation that read it before gets a RedisException from the closed connection, reported as
 *      StoreUnavailable.
 * Lettuce's own threads only run the pub/sub callback, which hands the compartment's name to
 * `onReleased` (the fleet schedules the wake-up; nothing blocks on the event loop).
 */
final class LettuceLeaseStore implements LeaseStore {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  /** Commands in a row that time out before the watchdog opens new connections. */
  static final int WATCHDOG_TIMEOUTS = 3;

  private static final long MAX_SUBSCRIBE_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** Requests Lettuce may queue on one connection before it refuses more, instead of 2^31 - 1. */
  private static final int REQUEST_QUEUE_SIZE = 1024;

  static final String RELEASE_CHANNEL = "bulkhead:released";

  private static final String NOW_AND_EPOCH =
      ""
          + "local t = redis.call('TIME')\n"
          + "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

  // KEYS: leases, fence, epoch, limit; ARGV: this process's limit, ttl ms, lease id. The stored
  // limit
  // rules (written by the latest build or setLimit); ARGV[1] only stands in for one that is
  // missing.
  private static final String ACQUIRE =
      NOW_AND_EPOCH
          + "local epoch = redis.call('GET', KEYS[3])\n"
          + "if not epoch then epoch = t[1] .. '.' .. t[2]; redis.call('SET', KEYS[3], epoch) end\n"
          + "local limit = redis.call('GET', KEYS[4])\n"
          + "if not limit then limit = ARGV[1]; redis.call('SET', KEYS[4], limit) end\n"
          + "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
          + "local held = redis.call('ZCARD', KEYS[1])\n"
          + "if held >= tonumber(limit) then return {0, held, epoch, limit} end\n"
          + "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])\n"
          + "return {1, redis.call('INCR', KEYS[2]), epoch, limit}\n";

  // KEYS: limit; ARGV: the limit. Returns the value it replaced (false when there was none).
  private static final String PUBLISH_LIMIT =
      ""
          + "local previous = redis.call('GET', KEYS[1])\n"
          + "redis.call('SET', KEYS[1], ARGV[1])\n"
          + "return {previous or ''}\n";

  private static final String RELEASE =
      ""
          + "local removed = redis.call('ZREM', KEYS[1], ARGV[1])\n"
          + "redis.call('PUBLISH', ARGV[2], ARGV[3])\n"
          + "return removed\n";

  // KEYS: leases_1, epoch_1, leases_2, epoch_2, ...; ARGV: expected epoch_k, "id ms id ms ..." for
  // k.
  private static final String RENEW =
      NOW_AND_EPOCH
          + "local out = {}\n"
          + "for k = 1, #KEYS / 2 do\n"
          + "  local leases = KEYS[2 * k - 1]\n"
          + "  local epoch = redis.call('GET', KEYS[2 * k])\n"
          + "  if not epoch then epoch = t[1] .. '.' .. t[2]; redis.call('SET', KEYS[2 * k], epoch) end\n"
          + "  local same = epoch == ARGV[2 * k - 1]\n"
          + "  local lost = {}\n"
          + "  local id = nil\n"
          + "  for word in string.gmatch(ARGV[2 * k], '%S+') do\n"
          + "    if id == nil then id = word else\n"
          + "      local expiry = now + tonumber(word)\n"
          + "      if same then\n"
          + "        local score = redis.call('ZSCORE', leases, id)\n"
          + "        if score and tonumber(score) > now then redis.call('ZADD', leases, expiry, id)\n"
          + "        else table.insert(lost, id) end\n"
          + "      else\n"
          + "        redis.call('ZADD', leases, expiry, id)\n"
          + "      end\n"
          + "      id = nil\n"
          + "    end\n"
          + "  end\n"
          + "  out[k] = {epoch, lost}\n"
          + "end\n"
          + "return out\n";

  private final RedisClient client;
  private final boolean ownsClient;
  private final RedisURI uri;
  private final String where;
  private final Consumer<String> onReleased;
  private final Duration commandTimeout;
  private final AtomicLong scriptReloads = new AtomicLong();
  private final String acquireSha;
  private final String releaseSha;
  private final String renewSha;
  private final String publishLimitSha;
  private final AtomicReference<@Nullable RedisCommands<String, String>> commands =
      new AtomicReference<>();
  private final AtomicInteger consecutiveTimeouts = new AtomicInteger();
  private final AtomicLong reconnects = new AtomicLong();
  private final long firstSubscribeBackoffNanos;
  // Confined to the fleet's scheduler thread (connectIfNeeded), but for dropConnections, which only
  // makes the next attempt due at once.
  private volatile long nextSubscribeAt = System.nanoTime();
  private long subscribeBackoffNanos;
  private boolean subscribeRefused;
  private volatile @Nullable StatefulRedisConnection<String, String> connection;
  private volatile @Nullable StatefulRedisPubSubConnection<String, String> pubSub;
  private volatile boolean closed;
  private volatile String lastFailure = "not tried yet";

  LettuceLeaseStore(
      RedisClient client,
      boolean ownsClient,
      RedisURI uri,
      Duration connectTimeout,
      Duration commandTimeout,
      Duration retryInterval,
      Consumer<String> onReleased) {
    this.client = client;
    this.ownsClient = ownsClient;
    this.uri = uri;
    this.where =
        uri.getHost() + ":" + uri.getPort(); // never the URI itself: it may hold a password
    this.onReleased = onReleased;
    this.commandTimeout = commandTimeout;
    this.firstSubscribeBackoffNanos = retryInterval.toNanos();
    // No TimeoutOptions: they would hold the handshake and the subscription to the command timeout
    // too. The sync API waits at most the connection's timeout and then cancels the command; the
    // URI
    // gives it the connect timeout while connecting, connectIfNeeded lowers it afterwards.
    // A client the application gave us keeps its options: they are shared with its other
    // connections.
    if (ownsClient) {
      client.setOptions(bulkheadOptions(connectTimeout));
    }
    this.acquireSha = sha1(ACQUIRE);
    this.releaseSha = sha1(RELEASE);
    this.renewSha = sha1(RENEW);
    this.publishLimitSha = sha1(PUBLISH_LIMIT);
  }

  /** The client options a bulkhead needs, set on a client the fleet creates itself. */
  static ClientOptions bulkheadOptions(Duration connectTimeout) {
    return ClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .requestQueueSize(REQUEST_QUEUE_SIZE)
        .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
        .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
        .build();
  }

  /**
   * What in a given client's options departs from {@link #bulkheadOptions}, in words for a log
   * line, or null when nothing that matters does.
   */
  static @Nullable String departsFromBulkheadOptions(ClientOptions options) {
    List<String> out = new ArrayList<>();
    if (options.getDisconnectedBehavior() != ClientOptions.DisconnectedBehavior.REJECT_COMMANDS) {
      out.add(
          "it queues commands while disconnected (disconnectedBehavior "
              + options.getDisconnectedBehavior()
              + "), so while Redis is away each admission waits the"
              + " command timeout before the fallback policy answers, instead of at once");
    }
    if (options.getRequestQueueSize() == Integer.MAX_VALUE) {
      out.add("its request queue is unbounded (requestQueueSize)");
    }
    return out.isEmpty() ? null : String.join("; ", out);
  }

  /**
   * Connects if not connected yet, and subscribes if not subscribed and its back-off has passed;
   * returns whether commands can be sent. Never throws. Runs on the fleet's scheduler thread (or in
   * the constructor), one call at a time.
   */
  boolean connectIfNeeded() {
    if (closed) {
      return false;
    }
    if (commands.get() == null) {
      StatefulRedisConnection<String, String> c = null;
      try {
        c = client.connect(uri);
        warnIfLeasesCanBeEvicted(c.sync());
        c.setTimeout(commandTimeout); // from here on each command gets the short timeout
        connection = c;
        consecutiveTimeouts.set(0);
        commands.set(c.sync());
        LOG.log(Level.INFO, "connected to Redis at " + where);
      } catch (RedisException e) {
        if (c != null) {
          c.closeAsync();
        }
        lastFailure = reason(e);
        LOG.log(Level.DEBUG, "Redis at " + where + " does not answer yet: " + lastFailure);
        return false;
      }
    }
    subscribeIfDue();
    return true;
  }

  /**
   * Opens the pub/sub connection and subscribes, unless it is open or its back-off has not passed.
   * The subscription only speeds up waking: without it, waiters are served by the poll. So a
   * refusal (an ACL without SUBSCRIBE, say) closes what it opened, is logged once, and is tried
   * again after a back-off that doubles up to {@link #MAX_SUBSCRIBE_BACKOFF_NANOS}.
   */
  private void subscribeIfDue() {
    if (pubSub != null || closed || System.nanoTime() - nextSubscribeAt < 0) {
      return;
    }
    StatefulRedisPubSubConnection<String, String> p = null;
    try {
      p = client.connectPubSub(uri);
      p.addListener(
          new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
              onReleased.accept(message);
            }
          });
      p.sync().subscribe(RELEASE_CHANNEL);
      p.setTimeout(commandTimeout);
      pubSub = p;
      subscribeBackoffNanos = 0;
      if (subscribeRefused) {
        subscribeRefused = false;
        LOG.log(Level.INFO, "Redis at " + where + " accepts the subscription again");
      }
    } catch (RedisException e) {
      if (p != null) {
        p.closeAsync();
      }
      subscribeBackoffNanos =
          Math.min(
              MAX_SUBSCRIBE_BACKOFF_NANOS,
              subscribeBackoffNanos == 0 ? firstSubscribeBackoffNanos : subscribeBackoffNanos * 2);
      nextSubscribeAt = System.nanoTime() + subscribeBackoffNanos;
      if (!subscribeRefused) {
        subscribeRefused = true;
        LOG.log(
            Level.WARNING,
            "Redis at "
                + where
                + " refuses to SUBSCRIBE to "
                + RELEASE_CHANNEL
                + " ("
                + reason(e)
                + "): waiters for a lease are woken by the poll only; trying again with a"
                + " back-off of up to "
                + TimeUnit.NANOSECONDS.toSeconds(MAX_SUBSCRIBE_BACKOFF_NANOS)
                + " s");
      }
    }
  }

  /**
   * After {@link #WATCHDOG_TIMEOUTS} commands in a row timed out, closes both connections: commands
   * are refused at once from then on, and connectIfNeeded opens new ones. A connection that lost
   * request bytes stays up while no reply ever pairs with its command again; only a new one
   * recovers. Called by whichever thread saw the last time-out; one of several wins.
   */
  private void dropConnections(RedisCommands<String, String> broken, int timeouts) {
    if (!commands.compareAndSet(broken, null)) {
      return; // another thread dropped it, or it was closed
    }
    reconnects.incrementAndGet();
    StatefulRedisConnection<String, String> c = connection;
    StatefulRedisPubSubConnection<String, String> p = pubSub;
    connection = null;
    pubSub = null;
    nextSubscribeAt = System.nanoTime();
    if (c != null) {
      c.closeAsync();
    }
    if (p != null) {
      p.closeAsync();
    }
    lastFailure = timeouts + " commands in a row timed out";
    LOG.log(
        Level.WARNING,
        "Redis at "
            + where
            + ": "
            + timeouts
            + " commands in a row timed out; the connections are closed and opened again");
  }

  /** How many times the watchdog closed the connections to open new ones. */
  long reconnects() {
    return reconnects.get();
  }

  /**
   * Lease keys carry no TTL, so only an allkeys-* policy can evict them (and with them,
   * admissions).
   */
  private void warnIfLeasesCanBeEvicted(RedisCommands<String, String> c) {
    try {
      String policy = c.configGet("maxmemory-policy").get("maxmemory-policy");
      if (policy != null && policy.startsWith("allkeys")) {
        LOG.log(
            Level.WARNING,
            "Redis at "
                + where
                + " runs with maxmemory-policy "
                + policy
                + ": under memory pressure it may evict leases and admit more calls than the limit;"
                + " use noeviction (or a volatile-* policy)");
      }
    } catch (RedisException e) {
      LOG.log(
          Level.DEBUG,
          "could not read maxmemory-policy (CONFIG may be disabled): " + e.getMessage());
    }
  }

  /**
   * Why the last connection attempt failed, in one line: the innermost cause's message (a refused
   * connection, {@code WRONGPASS}, {@code NOAUTH}), which names the server by host and port only.
   */
  String lastFailure() {
    return lastFailure;
  }

  private static String reason(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message =
        root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    return message.replace('\n', ' ').strip();
  }

  boolean connected() {
    return commands.get() != null;
  }

  String where() {
    return where;
  }

  @Override
  public Grant acquire(String compartment, int limit, long ttlMillis, String leaseId) {
    String[] keys = {
      leasesKey(compartment), fenceKey(compartment), epochKey(compartment), limitKey(compartment)
    };
    List<Object> r =
        run(acquireSha, ACQUIRE, keys, Integer.toString(limit), Long.toString(ttlMillis), leaseId);
    return new Grant(
        ((Long) r.get(0)) == 1L,
        (Long) r.get(1),
        (String) r.get(2),
        Integer.parseInt((String) r.get(3)));
  }

  @Override
  public @Nullable Integer publishLimit(String compartment, int limit) {
    List<Object> r =
        run(
            publishLimitSha,
            PUBLISH_LIMIT,
            new String[] {limitKey(compartment)},
            Integer.toString(limit));
    String previous = (String) r.get(0);
    return previous.isEmpty() ? null : Integer.valueOf(previous);
  }

  @Override
  public void release(String compartment, String leaseId) {
    run(
        releaseSha,
        RELEASE,
        new String[] {leasesKey(compartment)},
        leaseId,
        RELEASE_CHANNEL,
        compartment);
  }

  @Override
  public Map<String, Renewed> renew(
      Map<String, String> expectedEpoch, Map<String, List<Renewal>> leases, long ttlMillis) {
    List<String> names = new ArrayList<>(leases.keySet());
    String[] keys = new String[names.size() * 2];
    String[] args = new String[names.size() * 2];
    for (int k = 0; k < names.size(); k++) {
      String name = names.get(k);
      keys[2 * k] = leasesKey(name);
      keys[2 * k + 1] = epochKey(name);
      args[2 * k] = expectedEpoch.getOrDefault(name, "");
      StringBuilder pairs = new StringBuilder();
      for (Renewal r : leases.get(name)) {
        pairs
            .append(r.leaseId())
            .append(' ')
            .append(Math.min(ttlMillis, r.validForMillis()))
            .append(' ');
      }
      args[2 * k + 1] = pairs.toString();
    }
    List<Object> r = run(renewSha, RENEW, keys, args);
    Map<String, Renewed> out = new HashMap<>();
    for (int k = 0; k < names.size(); k++) {
      List<?> one = (List<?>) r.get(k);
      List<String> lost = new ArrayList<>();
      for (Object id : (List<?>) one.get(1)) {
        lost.add((String) id);
      }
      out.put(names.get(k), new Renewed((String) one.get(0), lost));
    }
    return out;
  }

  private List<Object> run(String sha, String script, String[] keys, String... args) {
    RedisCommands<String, String> c = commands.get();
    if (c == null) {
      throw new StoreUnavailableException("not connected to Redis at " + where, null);
    }
    try {
      List<Object> result;
      try {
        result = c.evalsha(sha, ScriptOutputType.MULTI, keys, args);
      } catch (RedisNoScriptException e) {
        scriptReloads.incrementAndGet(); // a restarted server forgot its scripts: EVAL loads it
        result = c.eval(script, ScriptOutputType.MULTI, keys, args);
      }
      consecutiveTimeouts.set(0);
      return result;
    } catch (RedisCommandTimeoutException e) {
      int timeouts = consecutiveTimeouts.incrementAndGet();
      if (timeouts >= WATCHDOG_TIMEOUTS) {
        dropConnections(c, timeouts);
      }
      throw new StoreUnavailableException("Redis at " + where + ": " + e.getMessage(), e);
    } catch (RedisException e) {
      throw new StoreUnavailableException("Redis at " + where + ": " + e.getMessage(), e);
    }
  }

  @Override
  public long scriptReloads() {
    return scriptReloads.get();
  }

  static String leasesKey(String compartment) {
    return "{bulkhead:" + compartment + "}:leases";
  }

  static String fenceKey(String compartment) {
    return "{bulkhead:" + compartment + "}:fence";
  }

  static String epochKey(String compartment) {
    return "{bulkhead:" + compartment + "}:epoch";
  }

  static String limitKey(String compartment) {
    return "{bulkhead:" + compartment + "}:limit";
  }

  private static String sha1(String script) {
    try {
      byte[] digest =
          java.security.MessageDigest.getInstance("SHA-1")
              .digest(script.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
      }
      return hex.toString();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-1, which every JDK must have", e);
    }
  }

  @Override
  public void close() {
    closed = true;
    commands.set(null);
    StatefulRedisPubSubConnection<String, String> p = pubSub;
    if (p != null) {
      p.close();
    }
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) {
      c.close();
    }
    if (ownsClient) {
      client.shutdown();
    }
  }
}
