import fastifyRateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { Errors } from '../errors.js';
import type { PolicyLayer } from './route-policy.js';
import type { ThrottleStore } from './throttle-store.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface AddressLimits {
  /** The `limits` layer of route-policy.ts. */
  layer: PolicyLayer;
  /**
   * Counts a credential that failed on a route that takes one with every request (WebDAV, see
   * access.ts) against its address's own `dav-credentials` budget, as large as the login budget
   * but apart from it; throws 429 past it. Shared, a sync client polling with a revoked token spent
   * the login budget of everyone behind its address (review of #37).
   */
  credentialFailure(request: FastifyRequest): Promise<void>;
}

/**
 * The `limits` layer (route-policy.ts): per client address, a global ceiling plus the tighter limit
 * a route's policy names (password, signup, refresh, breach check), or none for probes (unlimited). Counts go to
 * `store` (throttle-counters.ts: Redis behind a breaker), or to the plugin's own memory.
 */
export async function addressLimits(
  app: FastifyInstance,
  limits: Config['rateLimits'],
  store: ThrottleStore | undefined,
): Promise<AddressLimits> {
  await app.register(fastifyRateLimit, {
    global: false,
    ...(store === undefined ? {} : { store: pluginStore(store) }),
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
  const tighter: Record<'password' | 'signup' | 'refresh' | 'breach-check', Limiter> = {
    password: limiter('password', limits.loginPerMinute, MINUTE),
    signup: limiter('signup', limits.signupPerHour, HOUR),
    refresh: limiter('refresh', limits.refreshPerMinute, MINUTE),
    // Each check may cost a request to the range API: the server must not become someone's proxy to it.
    'breach-check': limiter('breach-check', limits.breachChecksPerMinute, MINUTE),
  };
  // Requests that match no route (URL scanning) count against the global limit too, and so does
  // every OPTIONS, here rather than per route: CORS's preflight route comes with the plumbing.
  // Registered after CORS, whose headers a browser needs on the 429 to read its Retry-After.
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.method === 'OPTIONS') await global(request);
  });
  const layer: PolicyLayer = ({ limit }, route) => {
    if (limit === 'unlimited' || route.method === 'OPTIONS') return undefined;
    return { onRequest: limit === undefined ? [global] : [global, tighter[limit]] };
  };
  return { layer, credentialFailure: limiter('dav-credentials', limits.loginPerMinute, MINUTE) };
}

/** @fastify/rate-limit's store interface over a ThrottleStore; keys already name their bucket. */
function pluginStore(store: ThrottleStore) {
  return class implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      store.hit(key, timeWindow).then(
        ({ count, remainingMs }) => callback(null, { current: count, ttl: remainingMs }),
        (error: Error) => callback(error),
      );
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
