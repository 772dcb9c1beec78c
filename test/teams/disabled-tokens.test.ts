import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { bearer } from '../helpers/auth.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { buildTestApp, forEachDatabase, login, newSession, testConfig, type Session } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { adminSession } from './support.js';

/** A 401 as the access layer answers it (CONTRACT.md: `Unauthorized`, `WWW-Authenticate: Bearer`). */
function assertUnauthorized(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 401, `${what}: ${res.statusCode} ${res.body}`);
  assert.equal(res.json().detail, 'Unauthorized', what);
}

/**
 * Every kind of route a plain access token opens (notes, folders, search, attachments, shares,
 * export, WebDAV with a bearer token): the routes that do not look at the session.
 */
function everyRoute(app: FastifyInstance, token: string, noteId: string) {
  const auth = bearer(token);
  return {
    'GET /api/notes': () => app.inject({ url: '/api/notes', headers: auth }),
    'GET /api/notes/{id}': () => app.inject({ url: `/api/notes/${noteId}`, headers: auth }),
    'POST /api/notes': () => app.inject({ method: 'POST', url: '/api/notes', headers: auth, payload: {} }),
    'GET /api/folders': () => app.inject({ url: '/api/folders', headers: auth }),
    'GET /api/notes/search': () => app.inject({ url: '/api/notes/search?q=secret', headers: auth }),
    'GET /api/attachments/usage': () => app.inject({ url: '/api/attachments/usage', headers: auth }),
    'GET /api/notes/{id}/shares': () => app.inject({ url: `/api/notes/${noteId}/shares`, headers: auth }),
    'GET /api/export': () => app.inject({ url: '/api/export', headers: auth }),
    'PROPFIND /dav/': () => app.inject({ method: 'PROPFIND', url: '/dav/', headers: { ...auth, depth: '0' } }),
  };
}

async function newNote(app: FastifyInstance, user: Session): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: user.auth,
    payload: { title: 'a secret', content: 'secret plans' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (res.json() as { id: string }).id;
}

const patchUser = (app: FastifyInstance, admin: Session, id: string, payload: object) =>
  app.inject({ method: 'PATCH', url: `/api/auth/admin/${id}`, headers: bearer(admin.accessToken), payload });

forEachDatabase('a disabled account: its access tokens stop at once on every route', (ctx) => {
  let app: FastifyInstance;
  let base = '';
  const streams: Stream[] = [];
  before(async () => {
    // The periodic re-check of streams far off, and the account-status cache long-lived: what stops
    // the token must be the disabling itself, not a timer.
    app = await buildTestApp(ctx.config, ctx.database, {
      liveTesting: { recheckMs: 600_000 },
      accountStatusTesting: { ttlMs: 600_000 },
    });
    base = await listen(app);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await app.close();
  });

  test('disable: the next request with the old access token is 401 everywhere; enable: that token stays dead, a new login works', async () => {
    const admin = await adminSession({ ...ctx, app });
    const user = await newSession(app, 'gone');
    const noteId = await newNote(app, user);
    const routes = everyRoute(app, user.accessToken, noteId);
    // Every route answers the token first, so whatever this instance keeps about the account is warm.
    for (const [what, call] of Object.entries(routes)) {
      const res = await call();
      assert.ok(res.statusCode < 300, `${what} before: ${res.statusCode} ${res.body}`);
    }
    const stream = await Stream.open(base, user.accessToken);
    streams.push(stream);
    assert.equal(stream.status, 200);

    const disabled = await patchUser(app, admin, user.userId, { disabled: true });
    assert.equal(disabled.statusCode, 200, disabled.body);

    for (const [what, call] of Object.entries(routes)) {
      const res = await call();
      if (what.startsWith('PROPFIND')) assert.equal(res.statusCode, 401, `${what}: ${res.body}`);
      else assertUnauthorized(res, what);
    }
    const reopened = await Stream.open(base, user.accessToken);
    streams.push(reopened);
    assert.equal(reopened.status, 401, 'a new event stream with the old token');
    await stream.until(() => stream.ended, 5000);

    const enabled = await patchUser(app, admin, user.userId, { disabled: false });
    assert.equal(enabled.statusCode, 200, enabled.body);
    // The old token was issued before the disabling ended its session: enabling does not bring it back.
    for (const [what, call] of Object.entries(routes)) {
      const res = await call();
      if (what.startsWith('PROPFIND')) assert.equal(res.statusCode, 401, `${what} after enabling: ${res.body}`);
      else assertUnauthorized(res, `${what} after enabling`);
    }
    const again = await login(app, user.username);
    for (const [what, call] of Object.entries(everyRoute(app, again.accessToken, noteId))) {
      const res = await call();
      assert.ok(res.statusCode < 300, `${what} with a new login: ${res.statusCode} ${res.body}`);
    }
    const fresh = await Stream.open(base, again.accessToken);
    streams.push(fresh);
    assert.equal(fresh.status, 200);
  });

  test("another account's tokens are untouched by a disabling", async () => {
    const admin = await adminSession({ ...ctx, app });
    const user = await newSession(app, 'gone');
    const bystander = await newSession(app, 'stays');
    assert.equal((await patchUser(app, admin, user.userId, { disabled: true })).statusCode, 200);
    assertUnauthorized(await app.inject({ url: '/api/notes', headers: user.auth }), 'the disabled one');
    assert.equal((await app.inject({ url: '/api/notes', headers: bystander.auth })).statusCode, 200);
  });
});

// Two instances sharing one database can only be run on PostgreSQL (SQLite's bus is the process's
// own; WORKERS on SQLite rely on the cache's short life, see src/accounts/account-status.ts).
if (databaseKinds.includes('postgres'))
  describe('a disabled account across instances [postgres]', () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let first: FastifyInstance;
    let second: FastifyInstance;
    before(async () => {
      scratch = await createScratchDatabase('postgres', { migrated: true });
      const config = testConfig(scratch.url);
      database = openDatabase(config.database);
      await migrateToLatest(database.db);
      // The second instance keeps what it read for ten minutes: only the bus can make it forget.
      first = await buildTestApp(config, database);
      second = await buildTestApp(config, database, { accountStatusTesting: { ttlMs: 600_000 } });
    });
    after(async () => {
      await first?.close();
      await second?.close();
      await database?.close();
      await scratch?.drop();
    });

    test('disabled on one instance, refused on the other as soon as the bus tells it; enabled, a new login works there', async () => {
      const admin = await adminSession({ app: first, database } as Parameters<typeof adminSession>[0]);
      const user = await newSession(first, 'twice');
      const onSecond = () => second.inject({ url: '/api/notes', headers: user.auth });
      assert.equal((await onSecond()).statusCode, 200);

      assert.equal((await patchUser(first, admin, user.userId, { disabled: true })).statusCode, 200);
      await until(async () => (await onSecond()).statusCode === 401, 'the other instance refusing the token', {
        timeoutMs: 5000,
      });

      assert.equal((await patchUser(first, admin, user.userId, { disabled: false })).statusCode, 200);
      const again = await login(first, user.username);
      await until(
        async () => (await second.inject({ url: '/api/notes', headers: again.auth })).statusCode === 200,
        'the other instance accepting a new login',
        { timeoutMs: 5000 },
      );
      assertUnauthorized(await onSecond(), 'the old token on the other instance');
    });
  });
