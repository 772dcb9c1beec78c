import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import type { DatabaseConfig } from '../../src/config.js';
import { buildTestApp, problemOf, testConfig, type TestContext } from '../helpers/harness.js';

const configuredRedis = process.env.TEST_REDIS_URL?.trim() || undefined;

/**
 * Redis is handled like PostgreSQL: TEST_REDIS_URL unset skips the tests that need it (and
 * scripts/test.mjs says so loudly, before and after the run); set, Redis must answer there, or
 * the file fails (assertRedisAnswers). `.ci/run` starts Redis and sets it.
 */
export const SKIP_REDIS: string | false =
  configuredRedis === undefined ? 'TEST_REDIS_URL is not set: tests that need Redis are skipped' : false;

/** The Redis under test; when SKIP_REDIS, a placeholder that no running test connects to. */
export const TEST_REDIS_URL = configuredRedis ?? 'redis://127.0.0.1:6379';

/** Throttling on, with limits high enough that only the one under test can trip. */
export const THROTTLE_ON = {
  RATE_LIMIT: 'on',
  RATE_LIMIT_GLOBAL_PER_MINUTE: '100000',
  RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
  RATE_LIMIT_SIGNUP_PER_HOUR: '100000',
  RATE_LIMIT_REFRESH_PER_MINUTE: '100000',
  RATE_LIMIT_BREACH_CHECKS_PER_MINUTE: '100000',
  RATE_LIMIT_LOGIN_FAILURES: '1000',
} as const;

export function databaseUrlOf(database: DatabaseConfig): string {
  return database.kind === 'sqlite' ? `sqlite:${database.filename}` : database.url;
}

/** Another app on the test's database, as a second instance behind a load balancer would be. */
export async function anotherInstance(
  ctx: TestContext,
  env: Record<string, string>,
  extra: Parameters<typeof buildTestApp>[2] = {},
): Promise<FastifyInstance> {
  return buildTestApp(testConfig(databaseUrlOf(ctx.config.database), env), ctx.database, extra);
}

/** A key prefix no other test (or earlier run) uses, so counters never leak between tests. */
export function uniquePrefix(): string {
  return `vellum-test:${randomBytes(6).toString('hex')}:`;
}

/** Throws, failing the test file, when TEST_REDIS_URL is set and Redis does not answer PING there. */
export async function assertRedisAnswers(): Promise<void> {
  if (SKIP_REDIS) return;
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    retryStrategy: () => null,
  });
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => {
    socketError ??= error;
  });
  let answer: unknown;
  try {
    await redis.connect();
    answer = await redis.ping();
  } catch (error) {
    // The socket's own error (ECONNREFUSED) says more than connect()'s "Connection is closed".
    answer = (socketError ?? (error instanceof Error ? error : undefined))?.message ?? error;
  } finally {
    redis.disconnect();
  }
  if (answer !== 'PONG') {
    throw new Error(
      `TEST_REDIS_URL=${TEST_REDIS_URL} is set, but Redis does not answer there (${String(answer)}): start it (.ci/run does), or unset TEST_REDIS_URL to skip the Redis tests`,
    );
  }
}

/** Removes every key under prefix (they would expire anyway; this keeps the test Redis tidy). */
export async function dropKeys(prefix: string): Promise<void> {
  assert.match(prefix, /^vellum-test:/, 'only ever drop keys of a test prefix');
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

export function loginAttempt(
  app: FastifyInstance,
  username: string,
  password: string,
  extra: Partial<InjectOptions> = {},
) {
  return app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password }, ...extra });
}

/** A 429 as the contract wants it: problem+json, Retry-After in whole seconds, the same in the body. */
export function assertThrottled(res: LightMyRequestResponse, maxSeconds: number): number {
  assert.equal(res.statusCode, 429, `expected 429, got ${res.statusCode}: ${res.body}`);
  const body = problemOf(res);
  assert.equal(body.code, 'too_many_requests');
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= maxSeconds,
    `Retry-After ${res.headers['retry-after']}`,
  );
  assert.equal(body.retry_after, retryAfter);
  return retryAfter;
}
