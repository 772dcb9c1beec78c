import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import {
  forEachDatabase,
  GOOD_PASSWORD,
  newSession,
  NO_WEB_CLIENT,
  testConfig,
  uniqueName,
  type TestContext,
} from '../helpers/harness.js';
import { captureLogs, type CapturedLogs } from '../helpers/logs.js';
import {
  assertRedisAnswers,
  assertThrottled,
  databaseUrlOf,
  dropKeys,
  loginAttempt,
  SKIP_REDIS,
  TEST_REDIS_URL,
  THROTTLE_ON,
  uniquePrefix,
} from './support.js';

// The test's own limit is a minute; ioredis would wait ten before giving up on a command. A request
// that waited on the silent Redis could therefore never answer in time: only the breaker lets it.
const TEST_TIMEOUT_MS = 60_000;
const REDIS_COMMAND_TIMEOUT_MS = 10 * 60_000;
// The breaker's budget: 50 ms in production, which a loaded CI machine missed while Redis was
// healthy (the breaker opened before the freeze, and the count went to memory). Seconds here still
// tell a silent Redis from a slow one, and far within the test's minute.
const REDIS_BUDGET_MS = 2_000;
const WRONG = 'not-the-password-at-all-1234';
const OPENED = /Redis breaker open/;
const CLOSED = /Redis breaker closed/;

await assertRedisAnswers();

/** A TCP relay to the test Redis that can stop passing the client's commands on, and start again. */
async function freezableRelay(port = 0) {
  const target = new URL(TEST_REDIS_URL);
  const clients: net.Socket[] = [];
  const upstreams = new Map<net.Socket, net.Socket>();
  let frozen = false;
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) socket.on('error', () => {});
    clients.push(client);
    upstreams.set(client, upstream);
    upstream.once('data', () => answered());
    upstream.pipe(client);
    if (!frozen) client.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
  const auth = target.username || target.password ? `${target.username}:${target.password}@` : '';
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    /** Resolves once Redis has first answered a client through the relay (ioredis' handshake). */
    answered: firstAnswer,
    /** Commands stay queued here: the connection is up, Redis simply never answers. */
    freeze() {
      frozen = true;
      for (const client of clients) {
        client.unpipe(upstreams.get(client));
        client.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const client of clients) client.pipe(upstreams.get(client)!);
    },
    async close() {
      for (const socket of [...clients, ...upstreams.values()]) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** vellum_redis_breaker_open as /metrics shows it. */
async function breakerGauge(app: FastifyInstance): Promise<number> {
  const res = await app.inject({ url: '/metrics' });
  assert.equal(res.statusCode, 200);
  const line = /^vellum_redis_breaker_open (\d+)$/m.exec(res.body);
  assert.ok(line, 'the gauge is exported');
  return Number(line[1]);
}

/** Accepts connections and never answers, not even the handshake. */
async function silentServer() {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

forEachDatabase('security: a Redis that stops answering', (ctx: TestContext) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  async function instance(
    redisUrl: string,
    env: Record<string, string>,
    now?: () => number,
  ): Promise<{ app: FastifyInstance; logs: CapturedLogs; prefix: string }> {
    const prefix = uniquePrefix();
    if (!SKIP_REDIS) cleanup.push(() => dropKeys(prefix));
    const logs = captureLogs('info');
    const config = testConfig(databaseUrlOf(ctx.config.database), {
      ...THROTTLE_ON,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      ...env,
    });
    const app = await buildApp({
      config,
      database: ctx.database,
      logger: logs.logger,
      webRoot: NO_WEB_CLIENT,
      throttleTesting: {
        redisCommandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS,
        redisBudgetMs: REDIS_BUDGET_MS,
        ...(now === undefined ? {} : { now }),
      },
    });
    await app.ready();
    cleanup.push(() => app.close());
    return { app, logs, prefix };
  }

  async function aNote(): Promise<{ url: string; auth: { authorization: string }; username: string }> {
    const session = await newSession(ctx.app);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: session.auth,
      payload: { title: 't', content: 'c' },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { url: `/api/notes/${(res.json() as { id: string }).id}`, auth: session.auth, username: session.username };
  }

  test('silent from the start: the instance starts, GET note and login answer, lockouts count in memory', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const silent = await silentServer();
    cleanup.push(() => silent.close());
    const note = await aNote();
    const { app, logs } = await instance(silent.url, { RATE_LIMIT_LOGIN_FAILURES: '2' });

    assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);
    assert.equal((await loginAttempt(app, note.username, GOOD_PASSWORD)).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(app, note.username, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(app, note.username, GOOD_PASSWORD), 60);
    assert.equal(logs.lines.filter((l) => OPENED.test(l)).length, 1, 'the open state is logged once');
    assert.equal(await breakerGauge(app), 1);
  });

  test('stops answering mid-run: requests answer from memory; when Redis answers again the breaker closes', {
    skip: SKIP_REDIS,
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const relay = await freezableRelay();
    cleanup.push(() => relay.close());
    let clock = Date.now();
    const note = await aNote();
    const { app, logs, prefix } = await instance(relay.url, { RATE_LIMIT_LOGIN_FAILURES: '3' }, () => clock);
    const redis = new Redis(TEST_REDIS_URL);
    cleanup.push(async () => redis.disconnect());
    const failKeys = async () => (await redis.keys(`${prefix}login:fail:*`)).length;

    // Closed: counted in Redis.
    assert.equal(await breakerGauge(app), 0);
    const before = await failKeys();
    assert.equal((await loginAttempt(app, uniqueName('ghost'), WRONG)).statusCode, 401);
    assert.equal(await failKeys(), before + 1);

    relay.freeze();
    assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);
    await logs.line(OPENED);
    const victim = uniqueName('victim');
    for (let i = 0; i < 3; i++) assert.equal((await loginAttempt(app, victim, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(app, victim, WRONG), 60);
    assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);
    assert.equal(logs.lines.filter((l) => OPENED.test(l)).length, 1, 'the open state is logged once');
    assert.equal(await failKeys(), before + 1, 'nothing reached Redis while it was silent');
    assert.equal(await breakerGauge(app), 1);

    // Within the cool-down nothing is sent to Redis, so a thaw alone changes nothing.
    relay.thaw();
    // After it, the next request probes Redis, which now answers.
    clock += 60_000;
    assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);
    await logs.line(CLOSED);
    assert.equal(logs.lines.filter((l) => CLOSED.test(l)).length, 1);
    assert.equal(await breakerGauge(app), 0);
    const counted = await failKeys();
    assert.equal((await loginAttempt(app, uniqueName('ghost'), WRONG)).statusCode, 401);
    assert.equal(await failKeys(), counted + 1, 'counted in Redis again');
  });

  test('unreachable at start-up: the instance starts with the breaker open (logged, naming REDIS_URL) and closes it once Redis is there', {
    skip: SKIP_REDIS,
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const port = await closedPort();
    let clock = Date.now();
    const note = await aNote();
    const { app, logs } = await instance(`redis://127.0.0.1:${port}`, {}, () => clock);
    const opened = JSON.parse(await logs.line(OPENED)) as { level: number; reason: string };
    assert.equal(opened.level, 40, 'a warning');
    assert.match(opened.reason, /^REDIS_URL: cannot connect to Redis at start-up \(.*ECONNREFUSED.*\)$/);
    assert.equal(await breakerGauge(app), 1);
    assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);

    // Redis appears where REDIS_URL points (through a relay on that port); ioredis has kept trying.
    const relay = await freezableRelay(port);
    cleanup.push(() => relay.close());
    await relay.answered;
    // ioredis is ready once it has read that answer; until then a probe fails and the breaker stays
    // open. Each round lets the event loop read its sockets (SQLite answers without any I/O wait).
    for (const deadline = Date.now() + 20_000; !logs.lines.some((l) => CLOSED.test(l)); ) {
      assert.ok(Date.now() < deadline, `the breaker did not close:\n${logs.lines.join('\n')}`);
      clock += 60_000; // past the cool-down: the next request probes Redis
      assert.equal((await app.inject({ url: note.url, headers: note.auth })).statusCode, 200);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(await breakerGauge(app), 0);
    assert.equal(logs.lines.filter((l) => OPENED.test(l)).length, 1, 'the open state is logged once');
  });
});

/** A port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
