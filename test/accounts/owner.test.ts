import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, bearer, cookieValue, REFRESH, refreshSession } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, login, newSession, signup } from '../helpers/harness.js';

const NEW_PASSWORD = 'amber-Falcon-meadow-77-softly-x';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PATHS = ['/api/auth/owner/', '/api/auth/owner'];

forEachDatabase('own account: me, logout, password change, deletion', (ctx) => {
  const me = (token: string) => ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(token) });
  const put = (url: string, token: string, payload: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'PUT', url, headers: { ...bearer(token), ...headers }, payload: payload as string });
  const del = (url: string, token: string, payload?: unknown) =>
    ctx.app.inject({
      method: 'DELETE',
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as string }),
    });

  test('GET /auth/me: exactly the public user, and which second factors it has', async () => {
    const s = await newSession(ctx.app);
    const res = await me(s.accessToken);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const user = res.json();
    assert.deepEqual(Object.keys(user), [
      'id',
      'username',
      'is_admin',
      'email',
      'created_at',
      'updated_at',
      'mfa',
      'mfa_enrolment_required',
      'has_password',
    ]);
    assert.deepEqual(user.mfa, { totp: false, passkeys: 0 });
    assert.equal(user.has_password, true);
    assert.deepEqual([user.id, user.username, user.is_admin], [s.userId, s.username, false]);
    assert.match(user.created_at, TIMESTAMP);
    assert.equal(user.updated_at, user.created_at);
    assertProblem(await ctx.app.inject({ method: 'GET', url: '/api/auth/me' }), 401, 'Unauthorized');
  });

  test('GET /auth/me: has_password is false for an account without a password (single sign-on)', async () => {
    const s = await newSession(ctx.app);
    // No route takes a password away: the test does it, as a single sign-on account has none.
    await ctx.database.db.updateTable('users').set({ password_hash: '' }).where('id', '=', s.userId).execute();
    const res = await me(s.accessToken);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().has_password, false);
  });

  test('logout: 204, revokes every session of the user only; access tokens live on outside /api/auth', async () => {
    const { username } = await signup(ctx.app);
    const [a, b] = [await login(ctx.app, username), await login(ctx.app, username)];
    const stranger = await newSession(ctx.app);
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: a.auth });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    for (const s of [a, b]) assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
    assert.equal((await refreshSession(ctx.app, stranger.refreshToken)).statusCode, 200);
    // Spec §4.1 rule 7 keeps them valid; CONTRACT.md part 3 refuses them on /api/auth, where sessions are managed.
    assert.equal((await ctx.app.inject({ url: '/api/notes', headers: a.auth })).statusCode, 200, 'spec §4.1 rule 7');
    assertProblem(await me(a.accessToken), 401, 'Unauthorized');
    assert.equal((await login(ctx.app, username)).username, username, 'a new login works');
  });

  test('logout without valid claims: 401 Not authenticated', async () => {
    const s = await newSession(ctx.app);
    for (const headers of [
      {},
      { authorization: 'Bearer nope' },
      bearer(s.refreshToken),
      { authorization: s.accessToken },
    ]) {
      assertProblem(
        await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers }),
        401,
        'Not authenticated',
      );
    }
  });

  for (const url of PATHS) {
    test(`PUT ${url}: old password first (401), then the new one's rules (400)`, async () => {
      const s = await newSession(ctx.app);
      assertProblem(
        await put(url, s.accessToken, { old_password: `${GOOD_PASSWORD}x`, new_password: NEW_PASSWORD }),
        401,
        'Invalid credentials',
      );
      assertProblem(
        await put(url, s.accessToken, { old_password: `${GOOD_PASSWORD}x`, new_password: 'short' }),
        401,
        'Invalid credentials',
      );
      assertProblem(
        await put(url, s.accessToken, { old_password: GOOD_PASSWORD, new_password: 'short' }),
        400,
        'Password must be at least 15 characters long; a few unrelated words make a strong one',
      );
      assertProblem(
        await put(url, s.accessToken, { old_password: GOOD_PASSWORD, new_password: 'passwordpassword' }),
        400,
        'This password appears in known data breaches; choose a different one',
      );
      assertProblem(
        await put(url, s.accessToken, { old_password: GOOD_PASSWORD, new_password: 'zzzzzzzzzzzzzzzzzzzz1' }),
        400,
        'Password is too easy to guess: make it longer, avoid repeats and sequences like "1234" or "qwerty", or mix in other kinds of characters',
      );
      // Nothing changed: the old password still logs in.
      assert.equal((await login(ctx.app, s.username)).userId, s.userId);
    });

    test(`PUT ${url}: a malformed body is 400, 415 or 413; no token is 401`, async () => {
      const s = await newSession(ctx.app);
      for (const body of [
        {},
        { old_password: GOOD_PASSWORD },
        { new_password: NEW_PASSWORD },
        { old_password: 1, new_password: NEW_PASSWORD },
        '{"old_password":',
        '',
      ]) {
        assertProblem(
          await put(url, s.accessToken, body, { 'content-type': 'application/json' }),
          400,
          'Invalid request body',
        );
      }
      const json = JSON.stringify({ old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD });
      assertProblem(
        await put(url, s.accessToken, json, { 'content-type': 'text/plain' }),
        415,
        'Unsupported content type: send application/json',
      );
      assertProblem(
        await put(url, s.accessToken, { old_password: GOOD_PASSWORD, new_password: 'x'.repeat(17_000) }),
        413,
        'Request body is too large',
      );
      const anonymous = await ctx.app.inject({
        method: 'PUT',
        url,
        payload: { old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD },
      });
      assertProblem(anonymous, 401, 'Unauthorized');
      assert.equal((await me(s.accessToken)).statusCode, 200);
    });

    test(`PUT ${url}: 200 {access_token, user}, new password, every earlier session revoked`, async () => {
      const { username } = await signup(ctx.app);
      const [a, b] = [await login(ctx.app, username), await login(ctx.app, username)];
      const res = await put(url, a.accessToken, { old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['access_token', 'user']);
      assert.deepEqual(Object.keys(body.user), ['id', 'username', 'is_admin', 'email', 'created_at', 'updated_at']);
      assert.deepEqual([body.user.id, body.user.username, body.user.is_admin], [a.userId, username, false]);
      assert.ok(body.user.updated_at >= body.user.created_at, 'updated_at is the change time');
      const {
        mfa: _mfa,
        mfa_enrolment_required: _required,
        has_password: _has,
        ...meUser
      } = (await me(body.access_token)).json();
      assert.deepEqual(body.user, meUser);
      for (const s of [a, b])
        assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
      assert.equal((await refreshSession(ctx.app, cookieValue(res, REFRESH)!)).statusCode, 200, 'the new pair works');
      const old = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username, password: GOOD_PASSWORD },
      });
      assertProblem(old, 401, 'Invalid credentials');
      assert.equal((await login(ctx.app, username, NEW_PASSWORD)).userId, a.userId);
    });

    test(`DELETE ${url}: wrong password 401, malformed body 400, then 204 and the account is gone`, async () => {
      const { username } = await signup(ctx.app);
      const [a, b] = [await login(ctx.app, username), await login(ctx.app, username)];
      assertProblem(await del(url, a.accessToken, { password: `${GOOD_PASSWORD}x` }), 401, 'Invalid credentials');
      assertProblem(await del(url, a.accessToken, { password: 'x'.repeat(300) }), 401, 'Invalid credentials');
      for (const body of [undefined, {}, { password: 7 }, { pass: GOOD_PASSWORD }]) {
        assertProblem(await del(url, a.accessToken, body), 400, 'Invalid request body');
      }
      assertProblem(
        await ctx.app.inject({ method: 'DELETE', url, payload: { password: GOOD_PASSWORD } }),
        401,
        'Unauthorized',
      );
      assert.equal((await me(a.accessToken)).statusCode, 200, 'still there');

      const res = await del(url, a.accessToken, { password: GOOD_PASSWORD });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      // The account's sessions ended with it: its tokens are refused on /api/auth (CONTRACT.md part 3).
      assertProblem(await me(a.accessToken), 401, 'Unauthorized');
      for (const s of [a, b])
        assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
      const relogin = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username, password: GOOD_PASSWORD },
      });
      assertProblem(relogin, 401, 'Invalid credentials');
      assertProblem(await del(url, b.accessToken, { password: GOOD_PASSWORD }), 401, 'Unauthorized');
    });
  }
});
