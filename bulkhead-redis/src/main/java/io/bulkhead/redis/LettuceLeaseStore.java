package io.bulkhead.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionStateAdapter;
import io.lettuce.core.RedisConnectionStateListener;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/*
 * The lease store on Redis, through Lettuce.
 *
 * Keys
 * ----
 * Per compartment eight keys share one hash tag, so a cluster keeps them on one slot:
 *   {bulkhead:NAME}:members  sorted set, member id -> when its record expires (ms of the server's TIME)
 *   {bulkhead:NAME}:held     hash, member id -> the slots the fleet counts for that member
 *   {bulkhead:NAME}:want     hash, member id -> the slots that member would use now (its demand)
 *   {bulkhead:NAME}:epoch    the TIME at which this state was born; a new value means the old was lost
 *   {bulkhead:NAME}:learn    "restart,until": when the server last started, and until when it grants
 *                            nothing new because calls granted by a lost state may still run
 *   {bulkhead:NAME}:fence    the last fencing token issued
 *   {bulkhead:NAME}:limit    the fleet's limit: written by the latest build or setLimit of any process
 *                            (publishLimit); a sync that finds it missing writes its process's limit
 *   {bulkhead:NAME}:seq      hash, member id -> the sequence number of its latest sync that ran
 * Every key lives for keyLife (twice the longest record term) after the last sync of any member:
 * refreshed while a member lives, gone once the whole fleet has been gone that long. The fencing
 * token stays monotonic across that: each is at least the server's TIME in microseconds.
 *
 * SYNC, one script, atomic on the server, with the server's TIME as the only clock (a member sends
 * durations, never instants, so clock skew between hosts cannot lengthen or shorten a record):
 *   1. No epoch: a new state is born (first use, or Redis lost its data). The members' hashes are
 *      cleared and `learn` records the server's restart instant (TIME minus INFO's uptime).
 *   1b. A sync whose sequence number is not above the member's last one changes nothing and answers
 *      "stale": a request that reached the server late, after a newer one (sent on a connection the
 *      watchdog replaced, its bytes held by the network). Run, it would lower the record to a `keep`
 *      of the past, below the calls the member runs now, and give their slots to the others.
 *   2. Learning window: until restart + term (the longest term any member sent), nothing new is
 *      granted: a call licensed by a state the server lost ends within one term of the restart.
 *   3. Purge the members whose record expired (their held and want go with them).
 *   4. base: a member the store knows under the epoch it expected keeps min(keep, its record), never
 *      below its running calls; any other (new, expired, or a new epoch) is counted for its running
 *      calls only.
 *   5. target: max-min fair shares of the limit over every member's want (ascending wants, each gets
 *      at most an even part of what is left), the rest spread evenly (remainders to the ids that sort
 *      first). Targets add up to at most the limit.
 *   6. grow (outside the window) = what brings base up to its target within room = limit - others.
 *      held = base + grow; cap = min(held, target, room), never below 0. A member's record is raised
 *      only within the room (S1); an adopted record above it (running calls the store did not count)
 *      gets a cap within the room, so the fleet admits nothing new while it is over.
 *   7. A new fencing token when slots are granted anew (grow, or a record the store did not know).
 *   8. Announcements on the rebalance channel: the record went down (slots freed), the member wants
 *      more than its cap and asked to say so, or the member has just joined (no record) below its fair
 *      target outside a learning window, so that the members that hold its share give it back now
 *      rather than at their next sync (a newcomer's calls would otherwise find no slot meanwhile).
 * Scripts run by EVALSHA. A server restarted without its script cache answers NOSCRIPT; the call is then
 * repeated once with EVAL, which runs the script and loads it again (counted in scriptReloads).
 *
 * Connections: one command connection and one pub/sub connection, both on one RedisClient configured
 * for a bulkhead (short command timeout, commands rejected at once while disconnected, a bounded
 * request queue). Connecting gets a longer timeout of its own: a JVM's first connection also starts
 * Netty, which missed a 500 ms bound on a busy host. If Redis does not answer, the store is created
 * anyway and connects from the fleet's sync thread (connectIfNeeded, every rebalance interval); every
 * operation until then throws StoreUnavailable. The subscription is optional: it only makes
 * rebalancing faster than the interval, so a refused SUBSCRIBE closes its connection, is logged once
 * and is retried with a back-off, while commands go on. The pub/sub connection is never left to
 * Lettuce's own reconnection, which subscribes again without a word if the server now refuses it (an
 * ACL changed across a restart): once it drops, the sync thread closes it as soon as the command
 * connection is back and subscribes on a new one, through the refusal's handling above. A watchdog
 * closes both connections after
 * WATCHDOG_TIMEOUTS commands in a row timed out (a connection that lost request bytes stays up while
 * no reply ever pairs with its command again), and connectIfNeeded opens new ones.
 *
 * Races
 * -----
 *   R1 connect vs use. `commands` is set by connectIfNeeded (on the fleet's sync thread or the
 *      constructor); an operation reads it once: null means unavailable.
 *   R2 close or watchdog vs use. Both null `commands` before closing the connections (the watchdog by
 *      CAS from the connection that timed out, so it closes it once); an operation that read it before
 *      gets a RedisException from the closed connection, reported as StoreUnavailable.
 * Lettuce's own threads only run the pub/sub callback, which hands the message to `onMessage` (the
 * fleet schedules a sync; nothing blocks on the event loop).
 */
final class LettuceLeaseStore implements LeaseStore {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  /** Commands in a row that time out before the watchdog opens new connections. */
  static final int WATCHDOG_TIMEOUTS = 3;

  private static final long MAX_SUBSCRIBE_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** Requests Lettuce may queue on one connection before it refuses more, instead of 2^31 - 1. */
  private static final int REQUEST_QUEUE_SIZE = 1024;

  /** Where syncs announce freed slots and unmet demand: "MEMBER NAME". */
  static final String REBALANCE_CHANNEL = "bulkhead:rebalance";

  // KEYS: epoch, fence, limit, members, held, want, learn, seq.
  // ARGV: member, expected epoch, term ms, own limit, keep, running, want, announce unmet (1/0),
  //       channel, key life ms, compartment name, sequence number.
  // Returns: held, cap, epoch, limit, token ("0": none), learning ms left, known (1/0), stale
  // (1/0).
  private static final String SYNC =
      ""
          + "local t = redis.call('TIME')\n"
          + "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
          + "local me, expected, term = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
          + "local keep, running, want = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])\n"
          + "local life = tonumber(ARGV[10])\n"
          + "local epoch = redis.call('GET', KEYS[1])\n"
          + "if not epoch then\n"
          + "  epoch = t[1] .. '.' .. t[2]\n"
          + "  redis.call('SET', KEYS[1], epoch)\n"
          + "  redis.call('DEL', KEYS[4], KEYS[5], KEYS[6], KEYS[8])\n"
          + "  local up = tonumber(string.match(redis.call('INFO', 'server'),"
          + " 'uptime_in_seconds:(%d+)'))\n"
          + "  local restart = string.format('%.0f', now - up * 1000)\n"
          + "  redis.call('SET', KEYS[7], restart .. ',' .. restart)\n"
          + "end\n"
          + "local seq = tonumber(ARGV[12])\n"
          + "if seq <= tonumber(redis.call('HGET', KEYS[8], me) or '0') then\n"
          + "  return {0, 0, epoch, 0, '0', 0, 0, 1}\n"
          + "end\n"
          + "redis.call('HSET', KEYS[8], me, seq)\n"
          + "if redis.call('PTTL', KEYS[8]) < life then redis.call('PEXPIRE', KEYS[8], life) end\n"
          + "local learnUntil = 0\n"
          + "local learn = redis.call('GET', KEYS[7])\n"
          + "if learn then\n"
          + "  local restart, before = string.match(learn, '(%d+),(%d+)')\n"
          + "  restart, before = tonumber(restart), tonumber(before)\n"
          + "  learnUntil = math.max(before, restart + term)\n"
          + "  if learnUntil > before then\n"
          + "    redis.call('SET', KEYS[7], string.format('%.0f,%.0f', restart, learnUntil))\n"
          + "  end\n"
          + "end\n"
          + "for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do\n"
          + "  redis.call('HDEL', KEYS[5], gone)\n"
          + "  redis.call('HDEL', KEYS[6], gone)\n"
          + "  if gone ~= me then redis.call('HDEL', KEYS[8], gone) end\n"
          + "end\n"
          + "redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)\n"
          + "local limit = redis.call('GET', KEYS[3])\n"
          + "if not limit then limit = ARGV[4]; redis.call('SET', KEYS[3], limit) end\n"
          + "limit = tonumber(limit)\n"
          + "local record = redis.call('HGET', KEYS[5], me)\n"
          + "local known = record and epoch == expected\n"
          + "local base = running\n"
          + "if known then base = math.max(math.min(keep, tonumber(record)), running) end\n"
          + "local others = 0\n"
          + "local held = redis.call('HGETALL', KEYS[5])\n"
          + "for i = 1, #held, 2 do\n"
          + "  if held[i] ~= me then others = others + tonumber(held[i + 1]) end\n"
          + "end\n"
          + "redis.call('HSET', KEYS[6], me, want)\n"
          + "local wants = redis.call('HGETALL', KEYS[6])\n"
          + "local ids, w = {}, {}\n"
          + "for i = 1, #wants, 2 do ids[#ids + 1] = wants[i]; w[wants[i]] = tonumber(wants[i + 1]) end\n"
          + "table.sort(ids)\n"
          + "local order = {}\n"
          + "for i, id in ipairs(ids) do order[i] = id end\n"
          + "table.sort(order, function(a, b)\n"
          + "  if w[a] ~= w[b] then return w[a] < w[b] end\n"
          + "  return a < b\n"
          + "end)\n"
          + "local n, left, share = #ids, limit, {}\n"
          + "for k, id in ipairs(order) do\n"
          + "  local give = math.min(w[id], math.floor(left / (n - k + 1)))\n"
          + "  share[id] = give\n"
          + "  left = left - give\n"
          + "end\n"
          + "local each, extra = math.floor(left / n), left % n\n"
          + "for k, id in ipairs(ids) do\n"
          + "  share[id] = share[id] + each\n"
          + "  if k <= extra then share[id] = share[id] + 1 end\n"
          + "end\n"
          + "local target = share[me]\n"
          + "local room = limit - others\n"
          + "local grow = 0\n"
          + "if now >= learnUntil then grow = math.max(0, math.min(target, room) - base) end\n"
          + "local new = base + grow\n"
          + "local cap = math.max(0, math.min(new, target, room))\n"
          + "redis.call('HSET', KEYS[5], me, new)\n"
          + "redis.call('ZADD', KEYS[4], now + term, me)\n"
          + "local token = '0'\n"
          + "if grow > 0 or not known then\n"
          + "  local last = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
          + "  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
          + "  token = string.format('%.0f', math.max(last + 1, us))\n"
          + "  redis.call('SET', KEYS[2], token)\n"
          + "end\n"
          + "if (record and new < tonumber(record)) or (ARGV[8] == '1' and cap < want)\n"
          + "    or (not record and now >= learnUntil and cap < target) then\n"
          + "  redis.call('PUBLISH', ARGV[9], me .. ' ' .. ARGV[11])\n"
          + "end\n"
          + "for k = 1, 7 do\n"
          + "  if redis.call('PTTL', KEYS[k]) < life then redis.call('PEXPIRE', KEYS[k], life) end\n"
          + "end\n"
          + "local learning = 0\n"
          + "if learnUntil > now then learning = learnUntil - now end\n"
          + "return {new, cap, epoch, limit, token, learning, known and 1 or 0, 0}\n";

  // KEYS: limit; ARGV: the limit, key life ms. Returns the value it replaced ('' when none).
  private static final String PUBLISH_LIMIT =
      ""
          + "local previous = redis.call('GET', KEYS[1])\n"
          + "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
          + "return {previous or ''}\n";

  // KEYS: members, held, want, seq; ARGV: member, running, channel, compartment name. A member
  // with calls still running keeps a record of them, which expires with its term.
  private static final String LEAVE =
      ""
          + "if tonumber(ARGV[2]) > 0 then\n"
          + "  if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then\n"
          + "    redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
          + "    redis.call('HSET', KEYS[3], ARGV[1], 0)\n"
          + "  end\n"
          + "else\n"
          + "  redis.call('ZREM', KEYS[1], ARGV[1])\n"
          + "  redis.call('HDEL', KEYS[2], ARGV[1])\n"
          + "  redis.call('HDEL', KEYS[3], ARGV[1])\n"
          + "  redis.call('HDEL', KEYS[4], ARGV[1])\n"
          + "end\n"
          + "redis.call('PUBLISH', ARGV[3], ARGV[1] .. ' ' .. ARGV[4])\n"
          + "return {1}\n";

  private final RedisClient client;
  private final boolean ownsClient;
  private final RedisURI uri;
  private final String where;
  private final Consumer<String> onMessage;
  private final Duration commandTimeout;
  private final AtomicLong scriptReloads = new AtomicLong();
  private final String syncSha = sha1(SYNC);
  private final String publishLimitSha = sha1(PUBLISH_LIMIT);
  private final String leaveSha = sha1(LEAVE);
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
  private volatile boolean pubSubDropped; // set on Lettuce's event loop, cleared on the sync thread
  private final RedisConnectionStateListener pubSubWatch =
      new RedisConnectionStateAdapter() {
        @Override
        public void onRedisDisconnected(RedisChannelHandler<?, ?> dropped) {
          if (dropped == pubSub) {
            pubSubDropped = true;
          }
        }
      };
  private volatile String lastFailure = "not tried yet";

  LettuceLeaseStore(
      RedisClient client,
      boolean ownsClient,
      RedisURI uri,
      Duration connectTimeout,
      Duration commandTimeout,
      Duration retryInterval,
      Consumer<String> onMessage) {
    this.client = client;
    this.ownsClient = ownsClient;
    this.uri = uri;
    this.where =
        uri.getHost() + ":" + uri.getPort(); // never the URI itself: it may hold a password
    this.onMessage = onMessage;
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
    client.addListener(pubSubWatch);
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
    StatefulRedisConnection<String, String> c = connection;
    StatefulRedisPubSubConnection<String, String> p = pubSub;
    if (pubSubDropped && p != null && c != null && c.isOpen()) {
      pubSubDropped = false; // Redis is back: subscribe on a new connection, as at start
      pubSub = null;
      nextSubscribeAt = System.nanoTime();
      p.closeAsync();
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
              onMessage.accept(message);
            }
          });
      p.sync().subscribe(REBALANCE_CHANNEL);
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
                + REBALANCE_CHANNEL
                + " ("
                + reason(e)
                + "): fleet compartments rebalance at their interval only; trying again with a"
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
  @Override
  public long reconnects() {
    return reconnects.get();
  }

  /**
   * The fleet's keys carry a TTL (they go once the fleet has been gone a while), so every policy
   * but noeviction may evict them under memory pressure, and with them the count of the calls
   * running.
   */
  private void warnIfLeasesCanBeEvicted(RedisCommands<String, String> c) {
    try {
      String policy = c.configGet("maxmemory-policy").get("maxmemory-policy");
      if (policy != null && !policy.equals("noeviction")) {
        LOG.log(
            Level.WARNING,
            "Redis at "
                + where
                + " runs with maxmemory-policy "
                + policy
                + ": under memory pressure it may evict the fleet's leases and admit more calls than"
                + " the limit; use noeviction");
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
  public SyncReply sync(SyncRequest q) {
    String name = q.compartment();
    List<Object> r =
        run(
            syncSha,
            SYNC,
            new String[] {
              epochKey(name),
              fenceKey(name),
              limitKey(name),
              membersKey(name),
              heldKey(name),
              wantKey(name),
              learnKey(name),
              seqKey(name)
            },
            q.member(),
            q.expectedEpoch(),
            Long.toString(q.termMillis()),
            Integer.toString(q.ownLimit()),
            Integer.toString(q.keep()),
            Integer.toString(q.running()),
            Integer.toString(q.want()),
            q.announceUnmet() ? "1" : "0",
            REBALANCE_CHANNEL,
            Long.toString(q.keyLifeMillis()),
            name,
            Long.toString(q.sequence()));
    if (((Long) r.get(7)) == 1L) {
      // Only a request that reached the server after a newer one gets this; its reply never
      // comes back on the connection that sent it. Nothing was changed: as if unanswered.
      throw new StoreUnavailableException(
          "Redis at " + where + " ran a sync older than the last one (" + q.sequence() + ")", null);
    }
    return new SyncReply(
        Math.toIntExact((Long) r.get(0)),
        Math.toIntExact((Long) r.get(1)),
        (String) r.get(2),
        Math.toIntExact((Long) r.get(3)),
        Long.parseLong((String) r.get(4)),
        (Long) r.get(5),
        ((Long) r.get(6)) == 1L);
  }

  @Override
  public @Nullable Integer publishLimit(String compartment, int limit, long keyLifeMillis) {
    List<Object> r =
        run(
            publishLimitSha,
            PUBLISH_LIMIT,
            new String[] {limitKey(compartment)},
            Integer.toString(limit),
            Long.toString(keyLifeMillis));
    String previous = (String) r.get(0);
    return previous.isEmpty() ? null : Integer.valueOf(previous);
  }

  @Override
  public void leave(String compartment, String member, int running) {
    run(
        leaveSha,
        LEAVE,
        new String[] {
          membersKey(compartment), heldKey(compartment), wantKey(compartment), seqKey(compartment)
        },
        member,
        Integer.toString(running),
        REBALANCE_CHANNEL,
        compartment);
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

  static String membersKey(String compartment) {
    return "{bulkhead:" + compartment + "}:members";
  }

  static String heldKey(String compartment) {
    return "{bulkhead:" + compartment + "}:held";
  }

  static String wantKey(String compartment) {
    return "{bulkhead:" + compartment + "}:want";
  }

  static String epochKey(String compartment) {
    return "{bulkhead:" + compartment + "}:epoch";
  }

  static String learnKey(String compartment) {
    return "{bulkhead:" + compartment + "}:learn";
  }

  static String fenceKey(String compartment) {
    return "{bulkhead:" + compartment + "}:fence";
  }

  static String limitKey(String compartment) {
    return "{bulkhead:" + compartment + "}:limit";
  }

  static String seqKey(String compartment) {
    return "{bulkhead:" + compartment + "}:seq";
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
    client.removeListener(pubSubWatch);
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
