import { Redis } from 'ioredis';

/**
 * Expiring counters for throttling. One instance keeps them in memory; several instances share
 * them through Redis. Both implementations have the same semantics, so the callers (the login
 * lockout in auth/login-throttle.ts) cannot tell them apart.
 */
export interface ThrottleStore {
  /** Adds one to the count under key and returns it; a new count lives ttlMs (a fixed window). */
  increment(key: string, ttlMs: number): Promise<number>;
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
    if (entries.size > maxEntries) prune();
  };

  // Expired entries first; if that is not enough, the oldest insertions (Map keeps their order).
  const prune = () => {
    const time = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= time) entries.delete(key);
    const target = Math.floor(maxEntries * 0.9);
    for (const key of entries.keys()) {
      if (entries.size <= target) break;
      entries.delete(key);
    }
  };

  return {
    async increment(key, ttlMs) {
      const entry = live(key);
      if (entry !== undefined) return ++entry.value;
      put(key, { value: 1, expiresAt: now() + ttlMs });
      return 1;
    },
    async claim(key, ttlMs) {
      if (live(key) !== undefined) return false;
      put(key, { value: 1, expiresAt: now() + ttlMs });
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
  return {
    async increment(key, ttlMs) {
      // SET NX starts the window only for a new key; INCR keeps the expiry. One round trip, atomic.
      const results = await redis.multi().set(k(key), 0, 'PX', ttlMs, 'NX').incr(k(key)).exec();
      const [error, count] = results?.[1] ?? [new Error('Redis transaction aborted'), null];
      if (error !== null) throw error;
      return Number(count);
    },
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
 * A client that fails fast: while Redis is unreachable, throttling commands error at once (and the
 * callers let the request through with a logged error) instead of queueing behind a reconnect.
 * Connecting is awaited, so a wrong REDIS_URL stops start-up instead of silently not throttling.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
  });
  // Without a listener ioredis would print connection errors itself; callers log command failures.
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect(); // or it keeps reconnecting in the background
    throw new Error(`REDIS_URL: cannot connect to Redis (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  return redis;
}
