import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { createBreaker, type BreakerState } from './breaker.js';
import {
  connectRedis,
  createBreakerStore,
  createMemoryStore,
  createRedisStore,
  type ThrottleStore,
} from './throttle-store.js';

/**
 * Where throttling keeps its counts: in this process, or in Redis when REDIS_URL is set so that
 * every instance sees the same counts.
 */
export interface ThrottleCounters {
  /** Per-address counts (rate-limit.ts); undefined: @fastify/rate-limit's own in-memory LRU. */
  rate?: ThrottleStore;
  /** Per-account login failures and per-session re-authentication failures, with their lockouts (sessions/login-throttle.ts). */
  login: ThrottleStore;
  /** The Redis breaker's state, for the metrics, when counts are in Redis. */
  redisBreaker?: () => BreakerState;
}

/**
 * Tests only: a far longer ioredis command time-out (so a request that waited on it would fail), a
 * clock for the breaker, and its budget (tests about sharing counts, not about a slow Redis, give
 * it seconds: on a loaded machine Redis itself may not be scheduled within 50 ms).
 */
export interface ThrottleTesting {
  redisCommandTimeoutMs?: number;
  now?: () => number;
  redisBudgetMs?: number;
}

/** In memory, or the Redis-backed stores, each behind one breaker that falls back to counting in memory. */
export async function throttleCounters(
  app: FastifyInstance,
  config: Config,
  testing: ThrottleTesting = {},
): Promise<ThrottleCounters> {
  if (config.redisUrl === undefined) return { login: createMemoryStore() };
  const { redis, answering, reason } = await connectRedis(
    config.redisUrl,
    testing.redisCommandTimeoutMs === undefined ? {} : { commandTimeoutMs: testing.redisCommandTimeoutMs },
  );
  app.addHook('onClose', async () => {
    // quit() waits for an answer that a hung Redis never gives.
    if (breaker.state === 'closed') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  });
  const breaker = createBreaker({
    log: app.log,
    ...(testing.now === undefined ? {} : { now: testing.now }),
    ...(testing.redisBudgetMs === undefined ? {} : { budgetMs: testing.redisBudgetMs }),
  });
  if (!answering) breaker.trip(reason ?? 'Redis accepted the connection at start-up but did not answer');
  const behindBreaker = (name: string) =>
    createBreakerStore(createRedisStore(redis, `${config.redisKeyPrefix}${name}:`), createMemoryStore(), breaker);
  return { rate: behindBreaker('rate'), login: behindBreaker('login'), redisBreaker: () => breaker.state };
}
