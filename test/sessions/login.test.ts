import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertProblem,
  bearer,
  decodeJwt,
  EXPIRES,
  newAdminSession,
  nowSeconds,
  REFRESH,
  setCookies,
} from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, signup, uniqueName } from '../helpers/harness.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

forEachDatabase('POST /auth/login', (ctx) => {
  const post = (payload: unknown, query = '', headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: `/api/auth/login${query}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  test('200 with only {access_token} by default; username lookup is case-insensitive', async () => {
    const { id, username } = await signup(ctx.app, uniqueName('Login'));
    const res = await post({ username: username.toUpperCase(), password: GOOD_PASSWORD });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['access_token']);
    assert.equal(decodeJwt(body.access_token).payload.sub, id);
    const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(body.access_token) });
    assert.equal(me.statusCode, 200);
  });

  test('token claims and lifetimes: access 900 s, refresh 604800 s, iat = nbf, a fresh jti each', async () => {
    const { id, username } = await signup(ctx.app);
    const before = nowSeconds();
    const first = await post({ username, password: GOOD_PASSWORD });
    const second = await post({ username, password: GOOD_PASSWORD });
    const after = nowSeconds();
    const jtis = new Set<unknown>();
    for (const res of [first, second]) {
      const access = decodeJwt(res.json().access_token);
      const refreshCookie = setCookies(res).get(REFRESH)!;
      const refresh = decodeJwt(refreshCookie.value);
      assert.deepEqual(access.header, { alg: 'HS256', typ: 'JWT' });
      assert.deepEqual(refresh.header, { alg: 'HS256', typ: 'JWT' });
      assert.deepEqual(Object.keys(access.payload).sort(), ['admin', 'exp', 'iat', 'jti', 'nbf', 'sub', 'type']);
      assert.deepEqual(Object.keys(refresh.payload).sort(), ['admin', 'exp', 'iat', 'jti', 'nbf', 'sub', 'type']);
      for (const [jwt, type, lifetime] of [
        [access, 'access', 900],
        [refresh, 'refresh', 604800],
      ] as const) {
        const p = jwt.payload as {
          sub: string;
          admin: boolean;
          type: string;
          jti: string;
          iat: number;
          nbf: number;
          exp: number;
        };
        assert.equal(p.sub, id);
        assert.equal(p.admin, false);
        assert.equal(p.type, type);
        assert.equal(p.exp - p.iat, lifetime);
        assert.equal(p.nbf, p.iat);
        assert.ok(p.iat >= before && p.iat <= after, 'iat is the issue time');
        assert.equal(typeof p.jti, 'string');
        assert.ok(p.jti.length > 0);
        jtis.add(p.jti);
      }
      // The view cookie holds the refresh expiry.
      assert.equal(setCookies(res).get(EXPIRES)!.value, String(refresh.payload.exp));
    }
    assert.equal(jtis.size, 4, 'every token has its own jti');
    assert.notEqual(first.json().access_token, second.json().access_token);
  });

  test("an administrator's tokens carry admin: true", async () => {
    const admin = await newAdminSession(ctx);
    assert.equal(decodeJwt(admin.accessToken).payload.admin, true);
    assert.equal(decodeJwt(admin.refreshToken).payload.admin, true);
  });

  test('includeUser: each accepted boolean string; the user is present only when true', async () => {
    const { id, username } = await signup(ctx.app);
    for (const value of ['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']) {
      const res = await post({ username, password: GOOD_PASSWORD }, `?includeUser=${value}`);
      assert.equal(res.statusCode, 200, `${value}: ${res.body}`);
      const body = res.json();
      if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) {
        assert.deepEqual(Object.keys(body).sort(), ['access_token', 'user'], value);
        assert.deepEqual(Object.keys(body.user), ['id', 'username', 'is_admin', 'email', 'created_at', 'updated_at']);
        assert.equal(body.user.id, id);
        assert.equal(body.user.username, username);
        assert.equal(body.user.is_admin, false);
        assert.match(body.user.created_at, TIMESTAMP);
        assert.match(body.user.updated_at, TIMESTAMP);
        assert.ok(!('password_hash' in body.user));
      } else {
        assert.deepEqual(Object.keys(body), ['access_token'], value);
      }
    }
  });

  test('includeUser: any other value is 400 and logs nobody in', async () => {
    const { username } = await signup(ctx.app);
    for (const value of ['', 'yes', 'no', 'on', '2', 'tRUE', 'TrUe', 'fAlSe', 'true%20', '%20true', 'null']) {
      const res = await post({ username, password: GOOD_PASSWORD }, `?includeUser=${value}`);
      assertProblem(res, 400, 'Query parameter "includeUser" must be true or false');
      assert.equal(res.headers['set-cookie'], undefined, value);
    }
    const twice = await post({ username, password: GOOD_PASSWORD }, '?includeUser=true&includeUser=false');
    assertProblem(twice, 400, 'Query parameter "includeUser" must be given once');
    // A parameter the route does not have is refused too, by name.
    assertProblem(
      await post({ username, password: GOOD_PASSWORD }, '?includeuser=true'),
      400,
      'Unknown query parameter "includeuser"',
    );
  });

  test('unknown user and wrong password: the same 401 Invalid credentials, byte for byte', async () => {
    const { username } = await signup(ctx.app);
    const unknown = await post({ username: uniqueName('nobody'), password: GOOD_PASSWORD });
    const wrong = await post({ username, password: `${GOOD_PASSWORD}!` });
    const invalidName = await post({ username: '--not a valid name--', password: GOOD_PASSWORD });
    const tooLong = await post({ username, password: 'x'.repeat(257) });
    for (const res of [unknown, wrong, invalidName, tooLong]) {
      assertProblem(res, 401, 'Invalid credentials');
      assert.equal(res.headers['set-cookie'], undefined);
    }
    assert.equal(wrong.body, unknown.body);
    assert.equal(invalidName.body, unknown.body);
    assert.equal(wrong.headers['content-type'], unknown.headers['content-type']);
  });

  test('a username no account can have (NUL, 1000 characters, emoji): 401 Invalid credentials, not 500', async () => {
    const { username } = await signup(ctx.app);
    const unknown = await post({ username: uniqueName('nobody'), password: GOOD_PASSWORD });
    // PostgreSQL refuses U+0000 in text: such a name must never reach a query.
    const odd = [
      `${username}\u0000`,
      '\u0000',
      `a\u0000${'b'.repeat(10)}`,
      'x'.repeat(1000),
      '\u{1F600}\u{1F4DD}',
      `${username}\u{1F600}`,
    ];
    for (const name of odd) {
      const res = await post({ username: name, password: GOOD_PASSWORD });
      assertProblem(res, 401, 'Invalid credentials');
      assert.equal(res.body, unknown.body, JSON.stringify(name));
      assert.equal(res.headers['set-cookie'], undefined);
    }
    // The attempt is still audited as a failure, without the name it gave.
    const failures = await ctx.database.db
      .selectFrom('auth_events')
      .select(['username', 'user_id', 'detail'])
      .where('kind', '=', 'login')
      .where('outcome', '=', 'failure')
      .where('detail', '=', 'unknown user')
      .execute();
    assert.ok(failures.length >= odd.length + 1);
    for (const row of failures) assert.ok(row.username === null || !row.username.includes('\u0000'));
  });

  test('a bad body: 400 Invalid request body, 415 or 413', async () => {
    const username = uniqueName();
    for (const body of [
      {},
      { username },
      { password: GOOD_PASSWORD },
      { username, password: 1 },
      [],
      '{"username"',
      '',
    ]) {
      assertProblem(await post(body), 400, 'Invalid request body');
    }
    assertProblem(
      await post(`{"username":"${username}","password":"${GOOD_PASSWORD}"}`, '', { 'content-type': 'text/plain' }),
      415,
      'Unsupported content type: send application/json',
    );
    assertProblem(await post({ username, password: 'x'.repeat(17 * 1024) }), 413, 'Request body is too large');
  });
});
