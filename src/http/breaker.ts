import type { FastifyBaseLogger } from 'fastify';

/**
 * How long a request may wait on Redis. A healthy Redis answers in about a millisecond (a few on a
 * busy network); past this, counting in memory for a while is better than holding every request,
 * since the global limiter runs on each one. ioredis' own command time-out (1 s) is far too long
 * for that and only reclaims the pending command.
 */
export const REDIS_BUDGET_MS = 50;
/** While open, Redis is left alone this long before one request probes it again. */
export const REDIS_COOL_DOWN_MS = 5_000;

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface Breaker {
  /**
   * Runs `primary` (a Redis call) within the budget; when it fails, times out, or the breaker is
   * open, answers with `fallback` (the in-memory equivalent) instead.
   */
  run<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T>;
  /** Starts open, as when Redis accepted the connection at start-up but never answered. */
  trip(reason: string): void;
  readonly state: BreakerState;
}

export interface BreakerOptions {
  log: FastifyBaseLogger;
  budgetMs?: number;
  coolDownMs?: number;
  now?: () => number;
}

/**
 * A circuit breaker for the throttling counters in Redis: closed (every call goes to Redis), open
 * (every call counts in memory), half-open (one call probes Redis while the others count in
 * memory). The probe closes the breaker as soon as Redis answers it, even after the budget: the
 * request that sent it has moved on, but an answer at all means Redis is back. Each change of state
 * is logged once, not once per request.
 */
export function createBreaker({
  log,
  budgetMs = REDIS_BUDGET_MS,
  coolDownMs = REDIS_COOL_DOWN_MS,
  now = Date.now,
}: BreakerOptions): Breaker {
  let state: BreakerState = 'closed';
  let openedAt = 0;

  const open = (reason: string, error?: unknown) => {
    openedAt = now();
    if (state === 'open') return;
    const wasProbing = state === 'half-open';
    state = 'open';
    if (!wasProbing) {
      log.warn(
        { err: error, reason },
        'Redis breaker open: throttling counts in memory on this instance until Redis answers again',
      );
    }
  };
  const close = () => {
    if (state === 'closed') return;
    state = 'closed';
    log.info('Redis breaker closed: Redis answers again; throttling counters are shared again');
  };

  return {
    get state() {
      return state;
    },
    trip(reason) {
      open(reason);
    },
    async run(primary, fallback) {
      if (state === 'half-open') return fallback(); // one probe at a time
      if (state === 'open') {
        if (now() - openedAt < coolDownMs) return fallback();
        state = 'half-open';
      }
      const probing = state === 'half-open';
      const attempt = primary();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        // setImmediate: after a stalled event loop the timer and Redis' answer are due together;
        // timers run before I/O, so without it a busy process would blame Redis for its own delay.
        timer = setTimeout(() => setImmediate(() => resolve('timeout')), budgetMs);
        timer.unref();
      });
      try {
        const outcome = await Promise.race([attempt.then((value) => ({ value })), timedOut]);
        if (outcome !== 'timeout') {
          if (probing) close();
          return outcome.value;
        }
        if (probing) {
          // Redis may still answer the probe; an answer at all means it is back.
          attempt.then(
            () => state === 'open' && close(),
            () => {},
          );
        } else {
          attempt.catch(() => {}); // ioredis rejects it at its own time-out
        }
        open(`no answer within ${budgetMs} ms`);
      } catch (error) {
        open('command failed', error);
      } finally {
        clearTimeout(timer);
      }
      return fallback();
    },
  };
}
