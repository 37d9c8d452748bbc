package io.bulkhead.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/*
 * The members of a fleet budget on Redis, through Lettuce.
 *
 * Keys (one hash tag, so a cluster keeps them on one slot):
 *   {bulkhead-fleet:NAME}:members   sorted set, member id -> heartbeat expiry (ms of the server's TIME)
 *   {bulkhead-fleet:NAME}:held      hash, member id -> the share that member may be holding
 *   {bulkhead-fleet:NAME}:joined    hash, member id -> when it first registered (ms of TIME)
 *   {bulkhead-fleet:NAME}:capacity  the capacity the live members registered with
 *   {bulkhead-fleet:NAME}:minimum   the minimum share they registered with
 * All of them expire one TTL after the last heartbeat, so a fleet that is gone leaves nothing behind.
 *
 * HEARTBEAT is one script, atomic on the server. Invariant H: the sum of `held` over the hash is at
 * most the capacity, and each member's `held` is at least what it holds locally. The script keeps H by
 * raising a member's `held` only up to what the others leave (capacity - their held), and the member
 * keeps its half by the order of its writes: it grows locally only after the script raised `held`, and
 * it lowers `held` (by sending a lower `applied`) only at the heartbeat after it shrank locally (after
 * a listener failed to shrink, it keeps sending the larger value). Targets: the live members in the
 * order they joined (then by id), the first served = min(live, floor(capacity / minimum)) of them get
 * floor(capacity / served) plus one for the first (capacity mod served), so the targets add up to
 * exactly the capacity and none is below the minimum; the others are parked at 0 until a served one
 * leaves (a newcomer never displaces a member that holds its share). A member is never raised to a
 * share below the minimum: it stays where it is until the minimum fits. The order survives the loss
 * of Redis's data because each member sends back when it joined. A dead member's entries go with its
 * heartbeat, in the script of whichever member comes next, which is how its share returns.
 * A member that the script (re)inserts never grows in that heartbeat: after Redis lost its data (a
 * restart without persistence) every member re-registers what it holds, at its next heartbeat, before
 * any of them grows into a set that looks empty (unless a heartbeat is late by a whole interval: then
 * the late member is over until its next one); and a newcomer grows at its second heartbeat.
 * H breaks only for a member cut off from Redis past its TTL that still holds its share (the documented
 * worst case); when it comes back, its `applied` is recorded as it is and the script returns a smaller
 * share until the sum fits again.
 */
final class LettuceShareStore implements ShareStore {

  private static final int REQUEST_QUEUE_SIZE = 64;

  private static final String HEARTBEAT =
      ""
          + "local t = redis.call('TIME')\n"
          + "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
          + "local members, held, capkey, joined, minkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]\n"
          + "local me, ttl, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
          + "local applied, minimum, since = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
          + "for _, dead in ipairs(redis.call('ZRANGEBYSCORE', members, '-inf', now)) do\n"
          + "  redis.call('HDEL', held, dead)\n"
          + "  redis.call('HDEL', joined, dead)\n"
          + "end\n"
          + "redis.call('ZREMRANGEBYSCORE', members, '-inf', now)\n"
          + "local fresh = not redis.call('ZSCORE', members, me)\n"
          + "local others = redis.call('ZCARD', members)\n"
          + "if not fresh then others = others - 1 end\n"
          + "local stored = tonumber(redis.call('GET', capkey))\n"
          + "local storedMin = tonumber(redis.call('GET', minkey)) or minimum\n"
          + "if stored and others > 0 and (stored ~= cap or storedMin ~= minimum) then\n"
          + "  return {0, others, 0, 0, stored, storedMin}\n"
          + "end\n"
          + "redis.call('SET', capkey, cap, 'PX', ttl)\n"
          + "redis.call('SET', minkey, minimum, 'PX', ttl)\n"
          + "redis.call('ZADD', members, now + ttl, me)\n"
          + "redis.call('HSET', held, me, applied)\n"
          + "local at = tonumber(redis.call('HGET', joined, me))\n"
          + "if not at then\n"
          + "  if since > 0 then at = since else at = now end\n"
          + "  redis.call('HSET', joined, me, at)\n"
          + "end\n"
          + "local live = redis.call('ZRANGE', members, 0, -1)\n"
          + "local when = {}\n"
          + "for _, m in ipairs(live) do when[m] = tonumber(redis.call('HGET', joined, m)) or now end\n"
          + "table.sort(live, function(x, y)\n"
          + "  if when[x] ~= when[y] then return when[x] < when[y] end\n"
          + "  return x < y\n"
          + "end)\n"
          + "local n, rank = #live, 0\n"
          + "for i, m in ipairs(live) do if m == me then rank = i end end\n"
          + "local served = math.min(n, math.floor(cap / minimum))\n"
          + "local target = 0\n"
          + "if rank <= served then\n"
          + "  target = math.floor(cap / served)\n"
          + "  if rank <= cap % served then target = target + 1 end\n"
          + "end\n"
          + "local taken = 0\n"
          + "local all = redis.call('HGETALL', held)\n"
          + "for i = 1, #all, 2 do if all[i] ~= me then taken = taken + tonumber(all[i + 1]) end end\n"
          + "local share = math.max(0, math.min(target, cap - taken))\n"
          + "if fresh then share = math.min(share, applied) end\n"
          + "if share > applied and share < minimum then share = applied end\n"
          + "if share > applied then redis.call('HSET', held, me, share) end\n"
          + "redis.call('PEXPIRE', members, ttl)\n"
          + "redis.call('PEXPIRE', held, ttl)\n"
          + "redis.call('PEXPIRE', joined, ttl)\n"
          + "return {share, n, target, at, 0, 0}\n";

  private static final String LEAVE =
      ""
          + "redis.call('ZREM', KEYS[1], ARGV[1])\n"
          + "redis.call('HDEL', KEYS[2], ARGV[1])\n"
          + "redis.call('HDEL', KEYS[4], ARGV[1])\n"
          + "return 1\n";

  private final RedisClient client;
  private final String where;
  private final Duration commandTimeout;
  private final String heartbeatSha = sha1(HEARTBEAT);
  private final String leaveSha = sha1(LEAVE);
  // Written only by the budget's single heartbeat thread (and close); volatile for close's reader.
  private volatile @Nullable StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;

  LettuceShareStore(RedisURI uri, Duration connectTimeout, Duration commandTimeout) {
    this.where = uri.getHost() + ":" + uri.getPort(); // never the URI: it may hold a password
    this.commandTimeout = commandTimeout;
    this.client = RedisClient.create(RedisURI.builder(uri).withTimeout(connectTimeout).build());
    // Configured as the lease store is, for the same reasons (see LettuceLeaseStore).
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(true)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .requestQueueSize(REQUEST_QUEUE_SIZE)
            .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
            .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build())
            .build());
  }

  String where() {
    return where;
  }

  @Override
  public Beat heartbeat(
      String budget,
      String member,
      long ttlMillis,
      int capacity,
      int minimum,
      int applied,
      long joinedAt) {
    List<Object> r =
        run(
            heartbeatSha,
            HEARTBEAT,
            keys(budget),
            member,
            Long.toString(ttlMillis),
            Integer.toString(capacity),
            Integer.toString(applied),
            Integer.toString(minimum),
            Long.toString(joinedAt));
    return new Beat(
        ((Long) r.get(0)).intValue(),
        ((Long) r.get(1)).intValue(),
        ((Long) r.get(2)).intValue(),
        (Long) r.get(3),
        ((Long) r.get(4)).intValue(),
        ((Long) r.get(5)).intValue());
  }

  @Override
  public void leave(String budget, String member) {
    run(leaveSha, LEAVE, keys(budget), member);
  }

  private static String[] keys(String budget) {
    String tag = "{bulkhead-fleet:" + budget + "}";
    return new String[] {
      tag + ":members", tag + ":held", tag + ":capacity", tag + ":joined", tag + ":minimum"
    };
  }

  private List<Object> run(String sha, String script, String[] keys, String... args) {
    RedisCommands<String, String> c = commands();
    try {
      try {
        return c.evalsha(sha, ScriptOutputType.MULTI, keys, args);
      } catch (RedisNoScriptException e) {
        return c.eval(script, ScriptOutputType.MULTI, keys, args); // a restarted server forgot it
      }
    } catch (RedisException e) {
      throw new StoreUnavailableException("Redis at " + where + ": " + e.getMessage(), e);
    }
  }

  /** The connection, opened on first use; after that Lettuce reconnects by itself. */
  private RedisCommands<String, String> commands() {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null) {
      if (closed) {
        throw new StoreUnavailableException("the fleet budget is closed", null);
      }
      try {
        c = client.connect();
      } catch (RedisException e) {
        throw new StoreUnavailableException(
            "Redis at " + where + " does not answer: " + e.getMessage(), e);
      }
      c.setTimeout(commandTimeout);
      connection = c;
    }
    return c.sync();
  }

  private static String sha1(String script) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-1, which every JDK must have", e);
    }
  }

  @Override
  public void close() {
    closed = true;
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) {
      c.close();
    }
    client.shutdown();
  }
}
