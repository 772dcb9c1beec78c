import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { assertProblem, bearer, newAdminSession, refreshSession } from '../helpers/auth.js';
import {
  forEachDatabase,
  GOOD_PASSWORD,
  login,
  newSession,
  problemOf,
  signup,
  type Session,
} from '../helpers/harness.js';

const LIMIT_MESSAGE = 'Query parameter "limit" must be an integer from 1 to 100';
const OFFSET_MESSAGE = 'Query parameter "offset" must be an integer 0 or more';

forEachDatabase('admin routes', (ctx) => {
  let admin: Session;
  const list = (query = '', token = admin.accessToken) =>
    ctx.app.inject({ method: 'GET', url: `/api/auth/admin/all${query}`, headers: bearer(token) });
  const remove = (id: string, token = admin.accessToken) =>
    ctx.app.inject({ method: 'DELETE', url: `/api/auth/admin/${id}`, headers: bearer(token) });

  test('GET /auth/admin/all: limit/offset, default 50, max 100, ordered by created_at then id', async () => {
    admin = await newAdminSession(ctx);
    // 105 accounts from the year 2000, so they sort first; three share each timestamp, so the
    // id decides among them. Inserted directly: hashing 105 passwords would only slow the test.
    const rows = Array.from({ length: 105 }, (_, i) => ({
      id: randomUUID(),
      username: `bulk${i}x${Math.random().toString(36).slice(2, 8)}`,
      password_hash: '$argon2id$v=19$m=19456,t=2,p=1$not-a-real-hash',
      is_admin: false,
      created_at: new Date(Date.UTC(2000, 0, 1) + Math.floor(i / 3) * 1000).toISOString(),
      updated_at: new Date(Date.UTC(2000, 0, 1)).toISOString(),
    }));
    await ctx.database.db.insertInto('users').values(rows).execute();
    const expected = rows
      .map((r) => ({
        id: r.id,
        username: r.username,
        is_admin: false,
        email: null,
        created_at: r.created_at,
        updated_at: r.updated_at,
        // What administrators see besides the User fields (CONTRACT.md, "Teams").
        disabled: false,
        mfa: { totp: false, passkeys: 0 },
        last_login_at: null,
        storage_used_bytes: 0,
        storage_quota_bytes: null,
      }))
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));

    const page = async (query: string) => {
      const res = await list(query);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      return res.json() as unknown[];
    };
    assert.deepEqual(await page(''), expected.slice(0, 50));
    assert.deepEqual(await page('?offset=0'), expected.slice(0, 50));
    assert.deepEqual(await page('?limit=100'), expected.slice(0, 100));
    assert.deepEqual(await page('?limit=1'), expected.slice(0, 1));
    assert.deepEqual(await page('?limit=7&offset=3'), expected.slice(3, 10));
    assert.deepEqual(await page('?offset=100&limit=5'), expected.slice(100, 105));
    const stitched = [
      ...(await page('?limit=40')),
      ...(await page('?limit=40&offset=40')),
      ...(await page('?limit=25&offset=80')),
    ];
    assert.deepEqual(stitched, expected);
    // Accounts made today come after them; the administrator among them.
    const tail = (await page('?offset=105')) as Array<{ id: string; is_admin: boolean }>;
    assert.ok(tail.some((u) => u.id === admin.userId && u.is_admin));
  });

  test('GET /auth/admin/all: an empty page is the JSON literal null', async () => {
    admin ??= await newAdminSession(ctx);
    for (const query of ['?offset=100000', '?offset=9007199254740991', '?limit=100&offset=5000']) {
      const res = await list(query);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.body, 'null');
    }
  });

  test('GET /auth/admin/all: bad limit or offset is 400 naming the parameter', async () => {
    admin ??= await newAdminSession(ctx);
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '1e2', '%205', '0x10', '99999999999999999999', 'null']) {
      assertProblem(await list(`?limit=${limit}`), 400, LIMIT_MESSAGE);
    }
    for (const offset of ['-1', 'abc', '1.5', '', '9007199254740992', '1e3']) {
      assertProblem(await list(`?offset=${offset}`), 400, OFFSET_MESSAGE);
    }
    for (const [query, name] of [
      ['?limit=5&limit=6', 'limit'],
      ['?offset=1&offset=2', 'offset'],
    ]) {
      const res = await list(query);
      assert.equal(res.statusCode, 400);
      assert.match(problemOf(res).detail, new RegExp(`"${name}"`));
    }
  });

  test('admin routes: 401 without a valid access token, 403 Forbidden for a non-admin', async () => {
    admin ??= await newAdminSession(ctx);
    const user = await newSession(ctx.app);
    assertProblem(await ctx.app.inject({ method: 'GET', url: '/api/auth/admin/all' }), 401, 'Unauthorized');
    assertProblem(await list('', admin.refreshToken), 401, 'Unauthorized');
    assertProblem(await list('', user.accessToken), 403, 'Forbidden');
    assertProblem(await list('?limit=0', user.accessToken), 403, 'Forbidden');
    assertProblem(
      await ctx.app.inject({ method: 'DELETE', url: `/api/auth/admin/${user.userId}` }),
      401,
      'Unauthorized',
    );
    assertProblem(await remove(admin.userId, user.accessToken), 403, 'Forbidden');
    assertProblem(await remove('not-a-uuid', user.accessToken), 403, 'Forbidden');
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: admin.auth })).statusCode, 200);
  });

  test('DELETE /auth/admin/{id}: 204; the user, their sessions and their login are gone', async () => {
    admin ??= await newAdminSession(ctx);
    const { username } = await signup(ctx.app);
    const [a, b] = [await login(ctx.app, username), await login(ctx.app, username)];
    const res = await remove(a.userId);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assertProblem(await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: a.auth }), 401, 'Unauthorized');
    for (const s of [a, b]) assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
    const relogin = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: GOOD_PASSWORD },
    });
    assertProblem(relogin, 401, 'Invalid credentials');
    const all = (await list('?limit=100&offset=100')).json() as Array<{ id: string }> | null;
    assert.ok(!(all ?? []).some((u) => u.id === a.userId));
    assertProblem(await remove(a.userId), 404, 'User not found');
  });

  test('DELETE /auth/admin/{id}: an upper-case UUID names the same user', async () => {
    admin ??= await newAdminSession(ctx);
    const s = await newSession(ctx.app);
    assert.equal((await remove(s.userId.toUpperCase())).statusCode, 204);
    assertProblem(await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: s.auth }), 401, 'Unauthorized');
  });

  test('DELETE /auth/admin/{id}: unknown id 404, malformed id 400 Resource ID missing', async () => {
    admin ??= await newAdminSession(ctx);
    assertProblem(await remove(randomUUID()), 404, 'User not found');
    const uuid = randomUUID();
    for (const id of [
      '',
      'not-a-uuid',
      '123',
      `${uuid}0`,
      uuid.slice(1),
      uuid.replaceAll('-', ''),
      `{${uuid}}`,
      `urn:uuid:${uuid}`,
      '%20',
    ]) {
      assertProblem(await remove(id), 400, 'Resource ID missing');
    }
  });

  test("admin routes read the caller's account on every call: deleted 401, demoted 403", async () => {
    const gone = await newAdminSession(ctx);
    const demoted = await newAdminSession(ctx);
    const target = await newSession(ctx.app);
    const events = (token: string) =>
      ctx.app.inject({ method: 'GET', url: '/api/auth/admin/events', headers: bearer(token) });
    assert.equal((await list('', gone.accessToken)).statusCode, 200);
    await ctx.database.db.deleteFrom('users').where('id', '=', gone.userId).execute();
    await ctx.database.db.updateTable('users').set({ is_admin: false }).where('id', '=', demoted.userId).execute();
    assertProblem(await list('', gone.accessToken), 401, 'Unauthorized');
    assertProblem(await events(gone.accessToken), 401, 'Unauthorized');
    assertProblem(await remove(target.userId, gone.accessToken), 401, 'Unauthorized');
    assertProblem(await list('', demoted.accessToken), 403, 'Forbidden');
    assertProblem(await events(demoted.accessToken), 403, 'Forbidden');
    assertProblem(await remove(target.userId, demoted.accessToken), 403, 'Forbidden');
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: target.auth })).statusCode, 200);
  });

  // Last: it leaves one administrator in the database.
  test('the last administrator cannot be deleted: 409 by admin delete and by owner delete', async () => {
    const solo = await newAdminSession(ctx);
    await ctx.database.db.updateTable('users').set({ is_admin: false }).where('id', '!=', solo.userId).execute();
    assertProblem(await remove(solo.userId, solo.accessToken), 409, 'Cannot delete the last administrator');
    const own = await ctx.app.inject({
      method: 'DELETE',
      url: '/api/auth/owner',
      headers: bearer(solo.accessToken),
      payload: { password: GOOD_PASSWORD },
    });
    assertProblem(own, 409, 'Cannot delete the last administrator');
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: solo.auth })).statusCode, 200);
    // With a second administrator, the first can go.
    const other = await newAdminSession(ctx);
    assert.equal((await remove(solo.userId, other.accessToken)).statusCode, 204);
  });
});
