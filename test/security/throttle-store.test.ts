import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import type { Redis } from 'ioredis';
import { loginLockout } from '../../src/sessions/login-throttle.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { registerErrorHandling } from '../../src/http/error-handler.js';
import { registerRoutePolicy } from '../../src/http/route-policy.js';
import {
  connectRedis,
  createMemoryStore,
  createRedisStore,
  type ThrottleStore,
} from '../../src/http/throttle-store.js';
import { assertRedisAnswers, dropKeys, SKIP_REDIS, TEST_REDIS_URL, uniquePrefix } from './support.js';

// No database here: these are the building blocks under the black-box tests, checked where a
// fake clock can show what would otherwise take an hour.

await assertRedisAnswers();

/**
 * The same contract, whichever store: memory (a fake clock) or Redis (its own clock, short TTLs).
 * `lapse(key)` lets the key's time run out: the fake clock jumps to its end; with Redis the test
 * waits until Redis itself no longer has the key.
 */
function storeContract(
  name: string,
  make: () => Promise<{ store: ThrottleStore; lapse(key: string): Promise<void> }>,
  skip: string | false = false,
) {
  describe(`throttle store: ${name}`, { skip }, () => {
    test('increment counts in a fixed window that starts with the first hit', async () => {
      const { store, lapse } = await make();
      assert.equal(await store.increment('a', 300), 1);
      assert.equal(await store.increment('a', 300), 2);
      assert.equal(await store.increment('b', 300), 1);
      const left = await store.remaining('a');
      assert.ok(left > 0 && left <= 300, String(left));
      await lapse('a');
      assert.equal(await store.remaining('a'), 0);
      assert.equal(await store.increment('a', 300), 1);
    });

    test('claim sets a key only when absent; expire and delete', async () => {
      const { store } = await make();
      assert.equal(await store.claim('lock', 300), true);
      assert.equal(await store.claim('lock', 300), false);
      await store.expire('lock', 2000);
      const left = await store.remaining('lock');
      assert.ok(left > 1000 && left <= 2000, `expire set the new time to live: ${left}`);
      await store.delete('lock', 'absent');
      assert.equal(await store.remaining('lock'), 0);
      assert.equal(await store.claim('lock', 300), true);
    });
  });
}

let clock = 1_000_000;
storeContract('memory', async () => {
  const store = createMemoryStore({ now: () => clock });
  return { store, lapse: async (key) => void (clock += await store.remaining(key)) };
});

{
  const prefix = uniquePrefix();
  let redis: Redis | undefined;
  storeContract(
    'redis',
    async () => {
      redis ??= (await connectRedis(TEST_REDIS_URL)).redis;
      const store = createRedisStore(redis, `${prefix}${Math.random()}:`);
      return {
        store,
        async lapse(key) {
          // Redis expires the key on its own clock: wait out the time it reports, until it reports none.
          for (let left = await store.remaining(key); left > 0; left = await store.remaining(key)) {
            await new Promise((resolve) => setTimeout(resolve, left));
          }
        },
      };
    },
    SKIP_REDIS,
  );
  after(async () => {
    await redis?.quit();
    if (!SKIP_REDIS) await dropKeys(prefix);
  });
}

test('memory store: a flood of keys is bounded', async () => {
  const store = createMemoryStore({ maxEntries: 100 });
  for (let i = 0; i < 1000; i++) await store.increment(`k${i}`, 60_000);
  // The newest keys survive; the oldest were evicted to make room.
  assert.equal(await store.increment('k999', 60_000), 2);
  assert.equal(await store.remaining('k0'), 0);
});

test('memory store: expired entries are evicted before live ones', async () => {
  let now = 0;
  const store = createMemoryStore({ maxEntries: 100, now: () => now });
  assert.equal(await store.increment('oldest-live', 60_000), 1);
  for (let i = 0; i < 50; i++) await store.increment(`short${i}`, 1_000);
  now += 1_000;
  for (let i = 0; i < 60; i++) await store.increment(`new${i}`, 60_000);
  // 111 keys were written; the 50 expired ones made the room, so every live one is still there.
  assert.equal(await store.increment('oldest-live', 60_000), 2);
  assert.equal(await store.increment('new0', 60_000), 2);
});

test('memory store: a flood of made-up usernames cannot evict a live lockout or a growing count', async () => {
  const now = 0;
  const store = createMemoryStore({ maxEntries: 100, now: () => now });
  assert.equal(await store.claim('lock:victim', 60_000), true);
  for (let i = 0; i < 4; i++) await store.increment('fail:victim', 15 * 60_000);
  for (let i = 0; i < 10_000; i++) await store.increment(`fail:made-up-${i}`, 15 * 60_000);
  assert.equal(await store.remaining('lock:victim'), 60_000);
  assert.equal(await store.claim('lock:victim', 60_000), false);
  assert.equal(await store.increment('fail:victim', 15 * 60_000), 5);
  // The flood only pushed out its own kind, oldest first.
  assert.equal(await store.remaining('fail:made-up-0'), 0);
  assert.equal(await store.increment('fail:made-up-9999', 15 * 60_000), 2);
});

describe('login lockout schedule', () => {
  let now = 5_000_000;
  const app = Fastify();
  registerErrorHandling(app);
  registerRoutePolicy(app, { lockout: loginLockout(createMemoryStore({ now: () => now }), 3) });
  // Stands in for the real route: only the password decides; its policy asks for the lockout.
  app.post(
    '/api/auth/login',
    { config: { policy: { auth: 'public', loginLockout: true } } },
    async (request, reply) => {
      const { password } = request.body as { password: string };
      return password === 'right' ? { ok: true } : reply.code(401).send({ ok: false });
    },
  );
  after(() => app.close());
  const attempt = (password: string, username = 'Alice') =>
    app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
  const retryAfter = async (password: string) => {
    const res = await attempt(password);
    assert.equal(res.statusCode, 429, res.body);
    return Number(res.headers['retry-after']);
  };

  test('lockouts double from one minute up to an hour, and a success clears them', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await attempt('wrong')).statusCode, 401);
    const waits = [await retryAfter('right')];
    for (let round = 0; round < 8; round++) {
      now += waits.at(-1)! * 1000;
      assert.equal((await attempt('wrong', 'ALICE')).statusCode, 401);
      waits.push(await retryAfter('right'));
    }
    assert.deepEqual(waits, [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    now += 3600 * 1000;
    assert.equal((await attempt('right')).statusCode, 200);
    assert.equal((await attempt('wrong')).statusCode, 401);
    assert.equal((await attempt('wrong')).statusCode, 401);
    assert.equal((await attempt('right')).statusCode, 200);
  });

  test('failures are forgotten 15 minutes after the first one', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await attempt('wrong', 'bob')).statusCode, 401);
    now += 15 * 60_000 + 1;
    for (let i = 0; i < 2; i++) assert.equal((await attempt('wrong', 'bob')).statusCode, 401);
    assert.equal((await attempt('wrong', 'bob')).statusCode, 401);
    assert.equal((await attempt('right', 'bob')).statusCode, 429);
  });
});

describe('throttling configuration', () => {
  test('defaults', () => {
    const config = loadConfig({});
    assert.equal(config.rateLimit, true);
    assert.deepEqual(config.rateLimits, {
      globalPerMinute: 600,
      loginPerMinute: 20,
      signupPerHour: 10,
      refreshPerMinute: 30,
      breachChecksPerMinute: 30,
      loginFailures: 5,
    });
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.redisKeyPrefix, 'vellum:');
    assert.deepEqual(config.corsOrigins, []);
  });

  test('bad values stop start-up with a message naming the variable', () => {
    for (const [name, value] of [
      ['RATE_LIMIT_GLOBAL_PER_MINUTE', '0'],
      ['RATE_LIMIT_LOGIN_PER_MINUTE', 'many'],
      ['RATE_LIMIT_SIGNUP_PER_HOUR', '1.5'],
      ['RATE_LIMIT_REFRESH_PER_MINUTE', '-1'],
      ['RATE_LIMIT_BREACH_CHECKS_PER_MINUTE', '0'],
      ['RATE_LIMIT_LOGIN_FAILURES', '0'],
      ['REDIS_URL', 'http://127.0.0.1:6379'],
      ['CORS_ORIGINS', 'notes.example.com'],
      ['RATE_LIMIT', 'maybe'],
    ]) {
      assert.throws(
        () => loadConfig({ [name!]: value! }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name!),
        name,
      );
    }
  });
});
