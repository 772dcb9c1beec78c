import fastifyRateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { registerLoginThrottle } from '../sessions/login-throttle.js';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { policyOf, prepend } from './policy.js';
import { createBreaker, type BreakerState } from './breaker.js';
import { connectRedis, createBreakerStore, createMemoryStore, createRedisStore, type ThrottleStore } from './throttle-store.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * All throttling: per client address (a global ceiling plus tighter limits on the routes that cost
 * a password hash or a token) and per account on login, as each route's policy declares (policy.ts).
 * Counters are in memory, or in Redis when REDIS_URL is set so that every instance sees the same
 * counts. Must run before routes are added: the limits attach themselves in an onRoute hook, ahead
 * of authentication and body parsing, so that a refused request costs nothing. RATE_LIMIT=off
 * skips all of it.
 */
export async function registerThrottling(app: FastifyInstance, config: Config, testing: ThrottleTesting = {}): Promise<Throttling> {
  if (!config.rateLimit) return {};
  const limits = config.rateLimits;
  const shared = config.redisUrl === undefined ? undefined : await sharedStores(app, config.redisUrl, config.redisKeyPrefix, testing);

  await app.register(fastifyRateLimit, {
    global: false,
    ...(shared === undefined ? {} : { store: pluginStore(shared.rate) }),
  });

  type Limiter = (request: FastifyRequest) => Promise<void>;
  const limiter = (bucket: string, max: number, timeWindow: number): Limiter => {
    const check = app.createRateLimit({
      max,
      timeWindow,
      // Buckets share one Redis namespace (the plugin names it after the route, which a manual
      // limiter lacks), so the bucket name is part of the key.
      keyGenerator: (request) => `${bucket}:${clientAddress(request)}`,
      // LRU size of the in-memory store: evicting live counters would let a client start over.
      cache: 50_000,
    } as Parameters<FastifyInstance['createRateLimit']>[0]);
    return async (request) => {
      let result;
      try {
        result = await check(request);
      } catch (error) {
        // Fail open: a Redis outage must not take the service down with it.
        request.log.error({ err: error, bucket }, 'rate limit store failed; request let through');
        return;
      }
      if (!result.isAllowed && result.isExceeded) throw Errors.tooManyRequests(Math.max(1, result.ttlInSeconds));
    };
  };

  const global = limiter('all', limits.globalPerMinute, MINUTE);
  const tighter: Record<'password' | 'signup' | 'refresh', Limiter> = {
    password: limiter('password', limits.loginPerMinute, MINUTE),
    signup: limiter('signup', limits.signupPerHour, HOUR),
    refresh: limiter('refresh', limits.refreshPerMinute, MINUTE),
  };
  // Requests that match no route (URL scanning) count against the global limit too, and so does
  // OPTIONS: with CORS on, its preflight route is added before this hook could see it.
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.method === 'OPTIONS') await global(request);
  });
  app.addHook('onRoute', (route: RouteOptions) => {
    const { limit } = policyOf(route);
    if (limit === 'unlimited') return;
    route.onRequest = prepend(route.onRequest, ...(limit === undefined ? [global] : [global, tighter[limit]]));
  });

  registerLoginThrottle(app, shared?.login ?? createMemoryStore(), limits.loginFailures);
  return shared === undefined ? {} : { redisBreaker: () => shared.breaker.state };
}

/** What the rest of the app may watch: the Redis breaker's state, when counters are in Redis. */
export interface Throttling {
  redisBreaker?: () => BreakerState;
}

/** Tests only: a far longer ioredis command time-out (so a request that waited on it would fail) and a clock for the breaker. */
export interface ThrottleTesting {
  redisCommandTimeoutMs?: number;
  now?: () => number;
}

/** The Redis-backed stores, each behind one breaker that falls back to counting in memory. */
async function sharedStores(app: FastifyInstance, url: string, prefix: string, testing: ThrottleTesting) {
  const { redis, answering, reason } = await connectRedis(url, testing.redisCommandTimeoutMs === undefined ? {} : { commandTimeoutMs: testing.redisCommandTimeoutMs });
  app.addHook('onClose', async () => {
    // quit() waits for an answer that a hung Redis never gives.
    if (breaker.state === 'closed') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  });
  const breaker = createBreaker({ log: app.log, ...(testing.now === undefined ? {} : { now: testing.now }) });
  if (!answering) breaker.trip(reason ?? 'Redis accepted the connection at start-up but did not answer');
  const behindBreaker = (name: string) => createBreakerStore(createRedisStore(redis, `${prefix}${name}:`), createMemoryStore(), breaker);
  return { rate: behindBreaker('rate'), login: behindBreaker('login'), breaker };
}

/** @fastify/rate-limit's store interface over a ThrottleStore; keys already name their bucket. */
function pluginStore(store: ThrottleStore) {
  return class implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      store.hit(key, timeWindow).then(({ count, remainingMs }) => callback(null, { current: count, ttl: remainingMs }), (error: Error) => callback(error));
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/** IPv6 clients usually own a whole /64, so they are counted per /64 (the plugin's default). */
function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip ?? 'unknown');
}
