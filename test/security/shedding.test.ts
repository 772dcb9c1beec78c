import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createPasswordHasher, type PasswordHasher } from '../../src/passwords/password-hasher.js';
import { AppError } from '../../src/errors.js';
import { lowerBackgroundThreadPriority, startThreadPool } from '../../src/ops/thread-priority.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, problemOf, type Session } from '../helpers/harness.js';

test('the hasher is full exactly while every slot runs and the queue is at its limit', async () => {
  const hasher = createPasswordHasher({ concurrency: 1, maxQueue: 1 });
  assert.equal(hasher.full, false);
  const running = hasher.hash('first-password-for-the-queue');
  assert.equal(hasher.full, false, 'one running, none waiting');
  const waiting = hasher.hash('second-password-for-the-queue');
  assert.equal(hasher.full, true);
  await assert.rejects(
    hasher.hash('third-password-for-the-queue'),
    (error: unknown) => error instanceof AppError && error.status === 503 && error.headers['retry-after'] === '1',
  );
  await Promise.all([running, waiting]);
  assert.equal(hasher.full, false);
  assert.equal(hasher.depth, 0);
});

/** While the hasher is full, every route that hashes answers 503 before reading its body. */
forEachDatabase('shedding password work while the hasher is full', (ctx) => {
  let full = false;
  let app: FastifyInstance;
  let session: Session;
  before(async () => {
    const real = createPasswordHasher();
    const hasher: PasswordHasher = {
      hash: (password) => real.hash(password),
      verify: (hash, password) => real.verify(hash, password),
      verifyDummy: (password) => real.verifyDummy(password),
      get depth() {
        return real.depth;
      },
      get full() {
        return full;
      },
    };
    app = await buildApp({ config: ctx.config, database: ctx.database, logger: false, hasher });
    await app.ready();
    session = await newSession(app, 'shed');
  });
  after(async () => {
    full = false;
    await app?.close();
  });

  const hashing = [
    { method: 'POST', url: '/api/auth/login' },
    { method: 'POST', url: '/api/auth/signup' },
    { method: 'PUT', url: '/api/auth/owner' },
    { method: 'PUT', url: '/api/auth/owner/' },
    { method: 'DELETE', url: '/api/auth/owner' },
    { method: 'DELETE', url: '/api/auth/owner/' },
  ] as const;

  test('503 with Retry-After on each, even for a body that would be refused as malformed', async () => {
    full = true;
    try {
      // Concurrently: each refusal waits SHED_DELAY_MS before it is sent.
      const cases = hashing.flatMap((route) =>
        ['{"username":', JSON.stringify({ username: session.username, password: GOOD_PASSWORD })].map((payload) => ({
          route,
          payload,
        })),
      );
      const answers = await Promise.all(
        cases.map(({ route, payload }) =>
          app.inject({ ...route, headers: { ...session.auth, 'content-type': 'application/json' }, payload }),
        ),
      );
      answers.forEach((res, i) => {
        assert.equal(res.statusCode, 503, `${cases[i]!.route.method} ${cases[i]!.route.url}: ${res.body}`);
        assert.equal(res.headers['retry-after'], '1');
        assert.equal(problemOf(res).code, 'busy');
      });
    } finally {
      full = false;
    }
  });

  test('other routes are served as usual meanwhile, and the account is untouched', async () => {
    full = true;
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/api/auth/me', headers: session.auth })).statusCode, 200);
      const created = await app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: session.auth,
        payload: { title: 't', content: 'c' },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await app.inject({ method: 'GET', url: '/api/notes', headers: session.auth })).statusCode, 200);
    } finally {
      full = false;
    }
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: session.username, password: GOOD_PASSWORD },
    });
    assert.equal(login.statusCode, 200, login.body);
  });
});

test('every thread but the event loop runs at a lower CPU priority (Linux)', async () => {
  const mainBefore = os.getPriority(process.pid);
  await startThreadPool();
  const lowered = lowerBackgroundThreadPriority();
  if (!fs.existsSync('/proc/self/task')) {
    assert.equal(lowered, 0);
    return;
  }
  const others = fs
    .readdirSync('/proc/self/task')
    .map(Number)
    .filter((tid) => tid !== process.pid);
  assert.ok(lowered > 0 && others.length > 0);
  for (const tid of others) {
    try {
      assert.ok(os.getPriority(tid) >= 10, `thread ${tid} at ${os.getPriority(tid)}`);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ESRCH') throw error; // a thread that ended since
    }
  }
  assert.equal(os.getPriority(process.pid), mainBefore);
});
