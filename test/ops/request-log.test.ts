import assert from 'node:assert/strict';
import os from 'node:os';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loggerOptions } from '../../src/logger.js';
import { openDatabase } from '../../src/db/database.js';
import { createScratchDatabase } from '../helpers/databases.js';
import {
  forEachDatabase,
  GOOD_PASSWORD,
  newSession,
  NO_WEB_CLIENT,
  testConfig,
  type Session,
} from '../helpers/harness.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type LogLine = Record<string, unknown> & { msg?: string; reqId?: string; level: number };

/** The app's own logger options (redaction included) at level info, writing lines into `lines`. */
function memoryLogger(lines: string[]) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return pino(loggerOptions({ logLevel: 'info' }), stream);
}

forEachDatabase('request log', (ctx) => {
  const lines: string[] = [];
  let app: FastifyInstance;
  let session: Session;

  before(async () => {
    app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: memoryLogger(lines),
      webRoot: NO_WEB_CLIENT,
    });
    await app.ready();
    session = await newSession(app, 'logged');
  });
  after(async () => {
    await app?.close();
  });

  const parsed = (): LogLine[] => lines.map((l) => JSON.parse(l) as LogLine);
  const requestLines = (reqId: string) => parsed().filter((l) => l.reqId === reqId && l.msg === 'request');

  test('a plain X-Request-Id is echoed and used in the log', async () => {
    for (const id of ['abc-123', 'trace.ID_7:span-9', 'x'.repeat(128)]) {
      const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-request-id'], id);
      assert.equal(requestLines(id).length, 1);
    }
  });

  test('a hostile X-Request-Id is replaced by a fresh UUID', async () => {
    for (const id of [
      'has spaces in it',
      'x'.repeat(500),
      'x'.repeat(129),
      'line\\nbreak',
      '<script>',
      '',
      'ünïcode',
    ]) {
      const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      assert.equal(res.statusCode, 200);
      const given = String(res.headers['x-request-id']);
      assert.match(given, UUID_V4, JSON.stringify(id));
      assert.equal(requestLines(given).length, 1);
      assert.equal(parsed().filter((l) => l.reqId === id).length, 0);
    }
    // Without the header every request gets its own id.
    const [a, b] = await Promise.all([1, 2].map(() => app.inject({ method: 'GET', url: '/healthz' })));
    assert.match(String(a!.headers['x-request-id']), UUID_V4);
    assert.notEqual(a!.headers['x-request-id'], b!.headers['x-request-id']);
  });

  test('exactly one "request" line per request, with reqId, route, status, durationMs and userId', async () => {
    const noteId = '00000000-0000-4000-8000-000000000000';
    const cases = [
      {
        id: 'log-ok',
        method: 'GET',
        url: '/api/notes',
        headers: session.auth,
        route: '/api/notes',
        status: 200,
        user: true,
      },
      {
        id: 'log-param',
        method: 'GET',
        url: `/api/notes/${noteId}`,
        headers: session.auth,
        route: '/api/notes/:noteID',
        status: 404,
        user: true,
      },
      { id: 'log-401', method: 'GET', url: '/api/notes', headers: {}, route: '/api/notes', status: 401, user: false },
      { id: 'log-unmatched', method: 'GET', url: '/nowhere', headers: {}, route: '/*', status: 404, user: false },
      {
        id: 'log-bad-json',
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: '{"username":',
        route: '/api/auth/login',
        status: 400,
        user: false,
      },
      {
        id: 'log-too-large',
        method: 'POST',
        url: '/api/auth/signup',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ username: 'big', password: 'p'.repeat(20_000) }),
        route: '/api/auth/signup',
        status: 413,
        user: false,
      },
      { id: 'log-healthz', method: 'GET', url: '/healthz', headers: {}, route: '/healthz', status: 200, user: false },
    ] as const;
    for (const c of cases) {
      const res = await app.inject({
        method: c.method,
        url: c.url,
        headers: { ...c.headers, 'x-request-id': c.id },
        ...('payload' in c ? { payload: c.payload } : {}),
      });
      assert.equal(res.statusCode, c.status, `${c.id}: ${res.body}`);
      assert.equal(res.headers['x-request-id'], c.id, c.id);
      const found = requestLines(c.id);
      assert.equal(found.length, 1, `${c.id}: ${JSON.stringify(found)}`);
      const line = found[0]!;
      // The line is written directly (not through pino's object path) in pino's own format.
      assert.deepEqual(
        Object.keys(line),
        [
          'level',
          'time',
          'pid',
          'hostname',
          'reqId',
          'method',
          'route',
          'status',
          'durationMs',
          ...(c.user ? ['userId'] : []),
          'ip',
          'msg',
        ],
        c.id,
      );
      assert.equal(line.pid, process.pid);
      assert.equal(line.hostname, os.hostname());
      assert.ok(typeof line.time === 'number' && Math.abs(line.time - Date.now()) < 60_000, c.id);
      assert.equal(line.level, 30, c.id);
      assert.equal(line.method, c.method, c.id);
      assert.equal(line.route, c.route, c.id);
      assert.equal(line.status, c.status, c.id);
      assert.equal(typeof line.durationMs, 'number', c.id);
      assert.ok((line.durationMs as number) >= 0, c.id);
      assert.equal(line.ip, '127.0.0.1', c.id);
      if (c.user) assert.equal(line.userId, session.userId, c.id);
      else assert.equal('userId' in line, false, c.id);
      // Fastify's own per-request lines are off: every line of this request is ours or an error report.
      for (const other of parsed().filter((l) => l.reqId === c.id && l.msg !== 'request')) {
        assert.ok(
          ['incoming request', 'request completed'].every((m) => other.msg !== m),
          JSON.stringify(other),
        );
      }
    }
  });

  test('a 5xx answer logs its "request" line at error level, next to the error report', async () => {
    const broken = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: memoryLogger(lines),
      hasher: {
        hash: async () => {
          throw new Error('argon2 exploded: internal detail');
        },
        verify: async () => false,
        verifyDummy: async () => {},
        depth: 0,
      },
    });
    try {
      const res = await broken.inject({
        method: 'POST',
        url: '/api/auth/signup',
        headers: { 'x-request-id': 'log-500' },
        payload: { username: 'brokenhasher', password: GOOD_PASSWORD },
      });
      assert.equal(res.statusCode, 500, res.body);
      assert.deepEqual(res.json(), {
        type: 'about:blank',
        title: 'Internal Server Error',
        status: 500,
        detail: 'Failed to create user',
        code: 'internal_error',
      });
      const found = requestLines('log-500');
      assert.equal(found.length, 1);
      assert.equal(found[0]!.level, 50);
      assert.equal(found[0]!.status, 500);
      assert.equal(found[0]!.route, '/api/auth/signup');
      const reports = parsed().filter((l) => l.reqId === 'log-500' && l.msg !== 'request');
      assert.equal(reports.length, 1, JSON.stringify(reports));
      assert.match(JSON.stringify(reports[0]!.err), /argon2 exploded/);
    } finally {
      await broken.close();
    }
  });

  test("a readiness probe's 503 is logged at info level: its answer, not a failure", async () => {
    // A database never migrated: /readyz says not ready.
    const scratch = await createScratchDatabase(ctx.kind);
    const database = openDatabase(testConfig(scratch.url).database);
    const unready = await buildApp({ config: testConfig(scratch.url), database, logger: memoryLogger(lines) });
    try {
      const res = await unready.inject({ method: 'GET', url: '/readyz', headers: { 'x-request-id': 'log-readyz' } });
      assert.equal(res.statusCode, 503, res.body);
      const found = requestLines('log-readyz');
      assert.deepEqual(
        found.map((line) => [line.level, line.status, line.route]),
        [[30, 503, '/readyz']],
      );
    } finally {
      await unready.close();
      await database.close();
      await scratch.drop();
    }
  });

  test('secrets never reach the log', async () => {
    const res = await app.inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: { ...session.auth, 'x-request-id': 'log-secret' },
      payload: { old_password: 'not-the-password-at-all-9', new_password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(requestLines('log-secret').length, 1);
    const all = lines.join('\n');
    assert.ok(!all.includes(GOOD_PASSWORD), 'a password was logged');
    assert.ok(!all.includes(session.accessToken), 'an access token was logged');
    assert.ok(!all.includes(session.refreshToken), 'a refresh token was logged');
  });
});
