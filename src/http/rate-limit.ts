import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { registerLoginThrottle } from '../auth/login-throttle.js';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import { connectRedis, createMemoryStore, createRedisStore } from './throttle-store.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Probes and scrapes come from one address many times a minute; a 429 would take the instance out. */
const UNLIMITED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * All throttling: per client address (a global ceiling plus tighter limits on the routes that cost
 * a password hash or a token) and per account on login. Counters are in memory, or in Redis when
 * REDIS_URL is set so that every instance sees the same counts. Must run before routes are added:
 * the per-route limits attach themselves in an onRoute hook. RATE_LIMIT=off skips all of it.
 */
export async function registerThrottling(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.rateLimit) return;
  const limits = config.rateLimits;
  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl);
  if (redis !== undefined) app.addHook('onClose', async () => void (await redis.quit().catch(() => redis.disconnect())));

  await app.register(fastifyRateLimit, {
    global: false,
    ...(redis === undefined ? {} : { redis, nameSpace: `${config.redisKeyPrefix}rate:` }),
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

  // On the root instance, so it also counts 404s (URL scanning) and requests refused later on.
  const global = limiter('all', limits.globalPerMinute, MINUTE);
  app.addHook('onRequest', async (request) => {
    if (!UNLIMITED_ROUTES.has(request.routeOptions.url ?? '')) await global(request);
  });

  const password = limiter('password', limits.loginPerMinute, MINUTE);
  const routeLimits: Record<string, Limiter> = {
    'POST /api/auth/login': password,
    'PUT /api/auth/owner': password,
    'PUT /api/auth/owner/': password,
    'DELETE /api/auth/owner': password,
    'DELETE /api/auth/owner/': password,
    'POST /api/auth/signup': limiter('signup', limits.signupPerHour, HOUR),
    'POST /api/auth/cookie/refresh': limiter('refresh', limits.refreshPerMinute, MINUTE),
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const limit = methods.map((method) => routeLimits[`${method} ${route.url}`]).find((l) => l !== undefined);
    if (limit === undefined) return;
    // First, before authentication and body parsing: a refused request should cost nothing.
    route.onRequest = [async (request) => limit(request), ...toArray(route.onRequest)];
  });

  const store = redis === undefined ? createMemoryStore() : createRedisStore(redis, `${config.redisKeyPrefix}login:`);
  registerLoginThrottle(app, store, limits.loginFailures);
}

/** IPv6 clients usually own a whole /64, so they are counted per /64 (the plugin's default). */
function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip ?? 'unknown');
}

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
