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
 *   {bulkhead-fleet:NAME}:capacity  the capacity the live members registered with
 * All three expire one TTL after the last heartbeat, so a fleet that is gone leaves nothing behind.
 *
 * HEARTBEAT is one script, atomic on the server. Invariant H: the sum of `held` over the hash is at
 * most the capacity, and each member's `held` is at least what it holds locally. The script keeps H by
 * raising a member's `held` only up to what the others leave (capacity - their held), and the member
 * keeps its half by the order of its writes: it grows locally only after the script raised `held`, and
 * it lowers `held` (by sending a lower `applied`) only at the heartbeat after it shrank locally. The
 * target share of a member is floor(capacity / live) plus one for the first (capacity mod live) members
 * in the order of their ids, so the targets add up to exactly the capacity. A dead member's entry goes
 * with its heartbeat, in the script of whichever member comes next, which is how its share returns.
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
          + "local members, held, capkey = KEYS[1], KEYS[2], KEYS[3]\n"
          + "local me, ttl, cap, applied = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])\n"
          + "for _, dead in ipairs(redis.call('ZRANGEBYSCORE', members, '-inf', now)) do\n"
          + "  redis.call('HDEL', held, dead)\n"
          + "end\n"
          + "redis.call('ZREMRANGEBYSCORE', members, '-inf', now)\n"
          + "local fresh = not redis.call('ZSCORE', members, me)\n"
          + "local others = redis.call('ZCARD', members)\n"
          + "if not fresh then others = others - 1 end\n"
          + "local stored = tonumber(redis.call('GET', capkey))\n"
          + "if stored and stored ~= cap and others > 0 then return {0, others, stored} end\n"
          + "redis.call('SET', capkey, cap, 'PX', ttl)\n"
          + "redis.call('ZADD', members, now + ttl, me)\n"
          + "redis.call('HSET', held, me, applied)\n"
          + "local live = redis.call('ZRANGE', members, 0, -1)\n"
          + "table.sort(live)\n"
          + "local n, rank = #live, 0\n"
          + "for i, m in ipairs(live) do if m == me then rank = i end end\n"
          + "local target = math.floor(cap / n)\n"
          + "if rank <= cap % n then target = target + 1 end\n"
          + "local taken = 0\n"
          + "local all = redis.call('HGETALL', held)\n"
          + "for i = 1, #all, 2 do if all[i] ~= me then taken = taken + tonumber(all[i + 1]) end end\n"
          + "local share = math.max(0, math.min(target, cap - taken))\n"
          + "if fresh then share = math.min(share, applied) end\n"
          + "if share > applied then redis.call('HSET', held, me, share) end\n"
          + "redis.call('PEXPIRE', members, ttl)\n"
          + "redis.call('PEXPIRE', held, ttl)\n"
          + "return {share, n, 0}\n";

  private static final String LEAVE =
      ""
          + "redis.call('ZREM', KEYS[1], ARGV[1])\n"
          + "redis.call('HDEL', KEYS[2], ARGV[1])\n"
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
  public Beat heartbeat(String budget, String member, long ttlMillis, int capacity, int applied) {
    List<Object> r =
        run(
            heartbeatSha,
            HEARTBEAT,
            keys(budget),
            member,
            Long.toString(ttlMillis),
            Integer.toString(capacity),
            Integer.toString(applied));
    return new Beat(
        ((Long) r.get(0)).intValue(), ((Long) r.get(1)).intValue(), ((Long) r.get(2)).intValue());
  }

  @Override
  public void leave(String budget, String member) {
    run(leaveSha, LEAVE, keys(budget), member);
  }

  private static String[] keys(String budget) {
    String tag = "{bulkhead-fleet:" + budget + "}";
    return new String[] {tag + ":members", tag + ":held", tag + ":capacity"};
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
