import type { Redis } from 'ioredis';
import type { Breaker } from './breaker.js';

/**
 * Expiring counters for throttling. One instance keeps them in memory; several instances share
 * them through Redis. Both implementations have the same semantics, so the callers (the login
 * lockout in sessions/login-throttle.ts) cannot tell them apart.
 */
export interface ThrottleStore {
  /** Adds one to the count under key and returns it; a new count lives ttlMs (a fixed window). */
  increment(key: string, ttlMs: number): Promise<number>;
  /** increment, also telling how long the window has left (what a rate limiter reports). */
  hit(key: string, ttlMs: number): Promise<{ count: number; remainingMs: number }>;
  /** Sets key for ttlMs only when it is absent; true when this call set it (a lock). */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Milliseconds until key expires; 0 when it is absent. */
  remaining(key: string): Promise<number>;
  /** Makes key live ttlMs from now. */
  expire(key: string, ttlMs: number): Promise<void>;
  delete(...keys: string[]): Promise<void>;
}

interface Entry {
  value: number;
  expiresAt: number;
  /** Set by claim: a lock, such as a login lockout in force. */
  claimed: boolean;
}

export interface MemoryStoreOptions {
  /** An attacker cycling through usernames must not grow the map without bound. */
  maxEntries?: number;
  now?: () => number;
}

export function createMemoryStore({ maxEntries = 100_000, now = Date.now }: MemoryStoreOptions = {}): ThrottleStore {
  const entries = new Map<string, Entry>();

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry !== undefined && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  const put = (key: string, entry: Entry) => {
    entries.set(key, entry);
    if (entries.size > maxEntries) prune(key);
  };

  /**
   * Makes room, least valuable first: expired entries; then counters of a single hit (what a flood
   * of made-up usernames leaves); then other counters; locks last. Within each kind the oldest
   * insertions go first (Map keeps their order). So a flood can only push out its own kind, never
   * a lockout in force while anything else is left.
   */
  const prune = (keep: string) => {
    const time = now();
    const target = Math.floor(maxEntries * 0.9);
    const passes: Array<(entry: Entry) => boolean> = [
      (entry) => entry.expiresAt <= time,
      (entry) => !entry.claimed && entry.value <= 1,
      (entry) => !entry.claimed,
      () => true,
    ];
    for (const [index, evictable] of passes.entries()) {
      for (const [key, entry] of entries) {
        // Every expired entry goes; live ones only until the map is back under the target.
        if (index > 0 && entries.size <= target) return;
        if (key !== keep && evictable(entry)) entries.delete(key);
      }
    }
  };

  const hit = (key: string, ttlMs: number) => {
    let entry = live(key);
    if (entry === undefined) put(key, (entry = { value: 0, expiresAt: now() + ttlMs, claimed: false }));
    entry.value += 1;
    return { count: entry.value, remainingMs: entry.expiresAt - now() };
  };

  return {
    async increment(key, ttlMs) {
      return hit(key, ttlMs).count;
    },
    async hit(key, ttlMs) {
      return hit(key, ttlMs);
    },
    async claim(key, ttlMs) {
      if (live(key) !== undefined) return false;
      put(key, { value: 1, expiresAt: now() + ttlMs, claimed: true });
      return true;
    },
    async remaining(key) {
      const entry = live(key);
      return entry === undefined ? 0 : entry.expiresAt - now();
    },
    async expire(key, ttlMs) {
      const entry = live(key);
      if (entry !== undefined) entry.expiresAt = now() + ttlMs;
    },
    async delete(...keys) {
      for (const key of keys) entries.delete(key);
    },
  };
}

export function createRedisStore(redis: Redis, prefix: string): ThrottleStore {
  const k = (key: string) => prefix + key;
  const hit = async (key: string, ttlMs: number) => {
    // SET NX starts the window only for a new key; INCR keeps the expiry. One round trip, atomic.
    const results = await redis.multi().set(k(key), 0, 'PX', ttlMs, 'NX').incr(k(key)).pttl(k(key)).exec();
    if (results === null) throw new Error('Redis transaction aborted');
    for (const [error] of results) if (error !== null) throw error;
    const ttl = Number(results[2]![1]);
    return { count: Number(results[1]![1]), remainingMs: ttl > 0 ? ttl : ttlMs };
  };
  return {
    async increment(key, ttlMs) {
      return (await hit(key, ttlMs)).count;
    },
    hit,
    async claim(key, ttlMs) {
      return (await redis.set(k(key), 1, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async remaining(key) {
      const ttl = await redis.pttl(k(key));
      return ttl > 0 ? ttl : 0;
    },
    async expire(key, ttlMs) {
      await redis.pexpire(k(key), ttlMs);
    },
    async delete(...keys) {
      if (keys.length > 0) await redis.del(...keys.map(k));
    },
  };
}

/**
 * Redis while it answers within the breaker's budget, memory otherwise. The memory counts start
 * from zero when the breaker opens and are dropped when it closes: for the length of an outage,
 * each instance throttles on its own, as one without Redis would.
 */
export function createBreakerStore(redis: ThrottleStore, memory: ThrottleStore, breaker: Breaker): ThrottleStore {
  return {
    increment: (key, ttlMs) =>
      breaker.run(
        () => redis.increment(key, ttlMs),
        () => memory.increment(key, ttlMs),
      ),
    hit: (key, ttlMs) =>
      breaker.run(
        () => redis.hit(key, ttlMs),
        () => memory.hit(key, ttlMs),
      ),
    claim: (key, ttlMs) =>
      breaker.run(
        () => redis.claim(key, ttlMs),
        () => memory.claim(key, ttlMs),
      ),
    remaining: (key) =>
      breaker.run(
        () => redis.remaining(key),
        () => memory.remaining(key),
      ),
    expire: (key, ttlMs) =>
      breaker.run(
        () => redis.expire(key, ttlMs),
        () => memory.expire(key, ttlMs),
      ),
    delete: (...keys) =>
      breaker.run(
        () => redis.delete(...keys),
        () => memory.delete(...keys),
      ),
  };
}

/** How long start-up waits for a Redis that accepted the connection to answer its handshake. */
const STARTUP_ANSWER_MS = 1_000;

export interface RedisConnection {
  redis: Redis;
  /** False when Redis could not be reached or did not answer in time: start with the breaker open. */
  answering: boolean;
  /** Why it is not answering, for the breaker's log line. */
  reason?: string;
}

/**
 * A client that fails fast: while Redis is unreachable, commands error at once instead of queueing
 * behind a reconnect (the breaker then counts in memory). A Redis that cannot be reached at
 * start-up (refused, unknown host, no answer) is treated like an outage at run time: the instance
 * starts with the breaker open and says so, and ioredis keeps reconnecting in the background, so
 * the breaker closes once Redis is there (a replica started before its Redis must not crash-loop).
 * One that accepts the connection and then says nothing only delays start-up by STARTUP_ANSWER_MS.
 * ioredis is imported here, so an instance without REDIS_URL never loads it.
 */
export async function connectRedis(url: string, { commandTimeoutMs = 1_000 } = {}): Promise<RedisConnection> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: commandTimeoutMs,
  });
  // Without a listener ioredis would print connection errors itself; the breaker logs what matters.
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => {
    socketError ??= error;
  });
  const ready = redis.connect();
  ready.catch(() => {}); // a handshake that fails after start-up is the breaker's business
  try {
    // The TCP connection first: refused, unknown host or silence until connectTimeout all end here.
    await new Promise<void>((resolve, reject) => {
      redis.once('connect', () => resolve());
      ready.then(() => resolve(), reject);
    });
  } catch (error) {
    // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than connect()'s "Connection is closed".
    const cause = socketError ?? error;
    const reason = `REDIS_URL: cannot connect to Redis at start-up (${cause instanceof Error ? cause.message : String(cause)})`;
    return { redis, answering: false, reason };
  }
  let timer: NodeJS.Timeout | undefined;
  const answered = await Promise.race([
    ready.then(
      () => true,
      () => false,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STARTUP_ANSWER_MS))),
  ]);
  clearTimeout(timer);
  return { redis, answering: answered };
}
