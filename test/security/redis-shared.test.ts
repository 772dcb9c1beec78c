import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName } from '../helpers/harness.js';
import {
  anotherInstance,
  assertRedisAnswers,
  assertThrottled,
  dropKeys,
  loginAttempt,
  SKIP_REDIS,
  TEST_REDIS_URL,
  THROTTLE_ON,
  uniquePrefix,
} from './support.js';

const WRONG = 'not-the-password-at-all-1234';
/**
 * These tests are about counts shared through Redis, not about a slow Redis (redis-breaker.test.ts):
 * the breaker's 50 ms budget would open it whenever a loaded machine leaves Redis unscheduled that
 * long, and the instance would count in memory. CI failed so once.
 */
const PATIENT = { throttleTesting: { redisBudgetMs: 10_000 } };
await assertRedisAnswers();

forEachDatabase('security: counters shared through Redis', (ctx) => {
  const prefixes: string[] = [];
  const extra: FastifyInstance[] = [];
  let redis: Redis;
  before(() => {
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: SKIP_REDIS !== false });
    redis.on('error', () => {});
  });
  after(async () => {
    await Promise.all(extra.map((app) => app.close()));
    if (!SKIP_REDIS) await Promise.all(prefixes.map(dropKeys));
    redis.disconnect();
  });

  /** Two instances on one database and one Redis namespace, like two replicas. */
  async function twoInstances(env: Record<string, string>): Promise<[FastifyInstance, FastifyInstance, string]> {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const settings = { ...THROTTLE_ON, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, ...env };
    const first = await anotherInstance(ctx, settings, PATIENT);
    const second = await anotherInstance(ctx, settings, PATIENT);
    extra.push(first, second);
    return [first, second, prefix];
  }

  test('a lockout earned on one instance holds on the other', { skip: SKIP_REDIS }, async () => {
    const { username } = await signup(await ctx.rebuild());
    const [a, b] = await twoInstances({ RATE_LIMIT_LOGIN_FAILURES: '3' });
    assert.equal((await loginAttempt(a, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(b, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(a, username, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(b, username, GOOD_PASSWORD), 60);
    assertThrottled(await loginAttempt(a, username, GOOD_PASSWORD), 60);
  });

  test('a session locked by wrong passwords on one instance is locked on the other', { skip: SKIP_REDIS }, async () => {
    const plain = await ctx.rebuild();
    const session = await login(plain, (await signup(plain)).username);
    const [a, b] = await twoInstances({ RATE_LIMIT_LOGIN_FAILURES: '3' });
    const change = (on: FastifyInstance, password: string) =>
      on.inject({
        method: 'PUT',
        url: '/api/auth/owner',
        headers: session.auth,
        payload: { old_password: password, new_password: 'amber-Falcon-meadow-77-softly-x' },
      });
    for (const on of [a, b, a]) assert.equal((await change(on, WRONG)).statusCode, 401);
    assertThrottled(await change(b, GOOD_PASSWORD), 60);
  });

  test('a success on one instance clears failures counted on the other', { skip: SKIP_REDIS }, async () => {
    const { username } = await signup(await ctx.rebuild());
    const [a, b] = await twoInstances({ RATE_LIMIT_LOGIN_FAILURES: '3' });
    for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(a, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(b, username, GOOD_PASSWORD)).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(a, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(b, username, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(a, username, GOOD_PASSWORD), 60);
  });

  test('lockouts grow: each failure after a lockout lapses locks twice as long', { skip: SKIP_REDIS }, async () => {
    const { username } = await signup(await ctx.rebuild());
    const [a, b, prefix] = await twoInstances({ RATE_LIMIT_LOGIN_FAILURES: '2' });
    for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(a, username, WRONG)).statusCode, 401);
    const waits = [assertThrottled(await loginAttempt(b, username, WRONG), 60)];
    for (let round = 0; round < 3; round++) {
      // Let the lockout lapse instead of waiting for it.
      const locks = await redis.keys(`${prefix}login:lock:*`);
      assert.equal(locks.length, 1);
      await redis.del(locks[0]!);
      assert.equal((await loginAttempt(round % 2 === 0 ? a : b, username, WRONG)).statusCode, 401);
      waits.push(assertThrottled(await loginAttempt(a, username, GOOD_PASSWORD), 3600));
    }
    assert.deepEqual(waits, [60, 120, 240, 480]);
  });

  test('per-address limits add up across instances', { skip: SKIP_REDIS }, async () => {
    const [a, b] = await twoInstances({ RATE_LIMIT_LOGIN_PER_MINUTE: '4', RATE_LIMIT_GLOBAL_PER_MINUTE: '8' });
    for (const app of [a, b, a, b]) assert.equal((await loginAttempt(app, uniqueName('ghost'), WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(a, uniqueName('ghost'), WRONG), 60);
    assertThrottled(await loginAttempt(b, uniqueName('ghost'), WRONG), 60);
    // 6 requests so far count towards the global ceiling of 8, on either instance.
    assert.equal((await a.inject({ url: '/api/notes' })).statusCode, 401);
    assert.equal((await b.inject({ url: '/api/notes' })).statusCode, 401);
    assertThrottled(await a.inject({ url: '/api/notes' }), 60);
    assertThrottled(await b.inject({ url: '/api/notes' }), 60);
  });

  test('instances with another key prefix do not share counters', { skip: SKIP_REDIS }, async () => {
    const [a] = await twoInstances({ RATE_LIMIT_GLOBAL_PER_MINUTE: '1' });
    const otherPrefix = uniquePrefix();
    prefixes.push(otherPrefix);
    const separate = await anotherInstance(
      ctx,
      { ...THROTTLE_ON, RATE_LIMIT_GLOBAL_PER_MINUTE: '1', REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: otherPrefix },
      PATIENT,
    );
    extra.push(separate);
    assert.equal((await a.inject({ url: '/api/notes' })).statusCode, 401);
    assertThrottled(await a.inject({ url: '/api/notes' }), 60);
    assert.equal((await separate.inject({ url: '/api/notes' })).statusCode, 401);
  });

  test('when Redis goes away, requests are let through (fail open), never a 500', { skip: SKIP_REDIS }, async () => {
    // A TCP relay to Redis that the test can cut.
    const target = new URL(TEST_REDIS_URL);
    const sockets: net.Socket[] = [];
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        socket.on('error', () => {});
        sockets.push(socket);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as net.AddressInfo).port;
    const { username } = await signup(await ctx.rebuild());
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const app = await anotherInstance(
      ctx,
      {
        ...THROTTLE_ON,
        REDIS_URL: `redis://${target.username ? `${target.username}:${target.password}@` : ''}127.0.0.1:${port}`,
        REDIS_KEY_PREFIX: prefix,
        RATE_LIMIT_LOGIN_FAILURES: '2',
      },
      PATIENT,
    );
    extra.push(app);
    for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(app, username, GOOD_PASSWORD), 60);

    relay.close();
    for (const socket of sockets) socket.destroy();
    // No waiting for ioredis to notice: whether its next command meets the dead connection or a
    // closed client, the request must be let through.
    assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(app, username, GOOD_PASSWORD)).statusCode, 200);
    assert.equal((await app.inject({ url: '/api/notes' })).statusCode, 401);
  });
});
