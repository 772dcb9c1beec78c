import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import {
  assertProblem,
  bearer,
  claims,
  cookieValue,
  CSRF_SECRET_COOKIE,
  decodeJwt,
  forgeToken,
  getCsrf,
  newAdminSession,
  nowSeconds,
  postRefresh,
  REFRESH,
  refreshSession,
} from '../helpers/auth.js';
import { forEachDatabase, login, newSession, signup } from '../helpers/harness.js';

forEachDatabase(
  'cookie routes: CSRF token and refresh',
  (ctx) => {
    const getCsrfRaw = (cookies: Record<string, string>) =>
      ctx.app.inject({ method: 'GET', url: '/api/auth/cookie/csrf', cookies });

    test('GET /auth/cookie/csrf: 204, no body, the token in X-CSRF-Token', async () => {
      const s = await newSession(ctx.app);
      const res = await getCsrfRaw({ [REFRESH]: s.refreshToken });
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.match(String(res.headers['x-csrf-token']), /^\S{16,}$/);
      assert.ok(cookieValue(res, CSRF_SECRET_COOKIE));
    });

    test('GET /auth/cookie/csrf without a refresh cookie that verifies: 401', async () => {
      const s = await newSession(ctx.app);
      const now = nowSeconds();
      const invalid = [
        '',
        'garbage',
        s.accessToken,
        `${s.refreshToken}x`,
        forgeToken(claims(s.userId, 'refresh'), { algorithm: 'HS512' }),
        forgeToken(claims(s.userId, 'refresh', { iat: now - 700_000, nbf: now - 700_000, exp: now - 10 })),
      ];
      assertProblem(await getCsrfRaw({}), 401, 'Unauthorized');
      for (const token of invalid) assertProblem(await getCsrfRaw({ [REFRESH]: token }), 401, 'Unauthorized');
    });

    test('refresh: 200 {access_token}; new cookies; the old token is spent', async () => {
      const s = await newSession(ctx.app);
      const res = await refreshSession(ctx.app, s.refreshToken);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(Object.keys(res.json()), ['access_token']);
      const access = decodeJwt(res.json().access_token).payload;
      assert.deepEqual([access.sub, access.type, access.admin], [s.userId, 'access', false]);
      const rotated = cookieValue(res, REFRESH)!;
      assert.notEqual(rotated, s.refreshToken);
      assert.equal(decodeJwt(rotated).payload.type, 'refresh');
      const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(res.json().access_token) });
      assert.equal(me.json().id, s.userId);
      assert.equal((await refreshSession(ctx.app, rotated)).statusCode, 200);
      assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
    });

    test('the CSRF token is bound to its secret cookie, not to the refresh token', async () => {
      const s = await newSession(ctx.app);
      const csrf = await getCsrf(ctx.app, s.refreshToken);
      const first = await postRefresh(ctx.app, s.refreshToken, csrf);
      assert.equal(first.statusCode, 200);
      assert.equal((await postRefresh(ctx.app, cookieValue(first, REFRESH), csrf)).statusCode, 200);
    });

    test('CSRF failures are 403 Invalid CSRF token and leave the refresh token unspent', async () => {
      const s = await newSession(ctx.app);
      const csrf = await getCsrf(ctx.app, s.refreshToken);
      const other = await getCsrf(ctx.app, (await newSession(ctx.app)).refreshToken);
      const cases = [
        postRefresh(ctx.app, s.refreshToken, undefined),
        postRefresh(ctx.app, s.refreshToken, { ...csrf, token: '' }),
        postRefresh(ctx.app, s.refreshToken, { ...csrf, token: 'wrong-token' }),
        postRefresh(ctx.app, s.refreshToken, { ...csrf, token: other.token }),
        postRefresh(ctx.app, s.refreshToken, { ...csrf, secret: 'forged.secret' }),
        postRefresh(ctx.app, s.refreshToken, undefined, { 'x-csrf-token': csrf.token }),
        // Missing header, secret cookie present.
        ctx.app.inject({
          method: 'POST',
          url: '/api/auth/cookie/refresh',
          cookies: { [REFRESH]: s.refreshToken, [CSRF_SECRET_COOKIE]: csrf.secret },
        }),
        // CSRF is checked before the refresh token, so even no cookie at all is a 403.
        postRefresh(ctx.app, undefined, undefined),
      ];
      for (const res of await Promise.all(cases)) {
        assertProblem(res, 403, 'Invalid CSRF token');
        assert.equal(res.headers['set-cookie'], undefined);
      }
      assert.equal((await postRefresh(ctx.app, s.refreshToken, csrf)).statusCode, 200);
    });

    test('after CSRF, the refresh checks of spec §4.1 rule 9, in order', async () => {
      const s = await newSession(ctx.app);
      const csrf = await getCsrf(ctx.app, s.refreshToken);
      assertProblem(await postRefresh(ctx.app, undefined, csrf), 401, 'Unauthorized');
      assertProblem(await postRefresh(ctx.app, '', csrf), 401, 'Unauthorized');
      assertProblem(await postRefresh(ctx.app, 'garbage', csrf), 401, 'Unauthorized');
      assertProblem(await postRefresh(ctx.app, s.accessToken, csrf), 401, 'Invalid token');
      // Well signed, but never issued: not in storage.
      assertProblem(
        await postRefresh(ctx.app, forgeToken(claims(s.userId, 'refresh')), csrf),
        401,
        'Invalid refresh token',
      );
      assert.equal((await postRefresh(ctx.app, s.refreshToken, csrf)).statusCode, 200);
    });

    test('a stored token whose sub is not a UUID: revoked first, then 400 Invalid user ID (rule 9.4, 9.5)', async () => {
      const s = await newSession(ctx.app);
      // Only a token the service stored gets this far, so store one, as a leaked secret would allow.
      const token = forgeToken(claims('not-a-uuid', 'refresh'));
      const exp = decodeJwt(token).payload.exp as number;
      await ctx.database.db
        .insertInto('refresh_tokens')
        .values({
          id: randomUUID(),
          user_id: s.userId,
          family_id: randomUUID(),
          parent_id: null,
          token_hash: createHash('sha256').update(token).digest('hex'),
          expires_at: new Date(exp * 1000).toISOString(),
          revoked: false,
          revoked_at: null,
          created_at: new Date().toISOString(),
          user_agent: null,
          ip_address: null,
        })
        .execute();
      const csrf = await getCsrf(ctx.app, token);
      assertProblem(await postRefresh(ctx.app, token, csrf), 400, 'Invalid user ID');
      assertProblem(await postRefresh(ctx.app, token, csrf), 401, 'Invalid refresh token');
    });

    test('a stored token past its expiry is 401 Invalid refresh token', async () => {
      const s = await newSession(ctx.app);
      await ctx.database.db
        .updateTable('refresh_tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('user_id', '=', s.userId)
        .execute();
      assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
    });

    test('reuse: a second use is 401, and it revokes the tokens rotated from it, but not other sessions', async () => {
      const { username } = await signup(ctx.app);
      const a = await login(ctx.app, username);
      const other = await login(ctx.app, username);
      const csrf = await getCsrf(ctx.app, a.refreshToken);
      const first = await postRefresh(ctx.app, a.refreshToken, csrf);
      assert.equal(first.statusCode, 200);
      const b = cookieValue(first, REFRESH)!;
      assertProblem(await postRefresh(ctx.app, a.refreshToken, csrf), 401, 'Invalid refresh token');
      assertProblem(await postRefresh(ctx.app, b, csrf), 401, 'Invalid refresh token');
      assert.equal((await refreshSession(ctx.app, other.refreshToken)).statusCode, 200);
    });

    test('concurrent refreshes with one token: exactly one succeeds', async () => {
      const s = await newSession(ctx.app);
      const csrf = await getCsrf(ctx.app, s.refreshToken);
      const results = await Promise.all(Array.from({ length: 6 }, () => postRefresh(ctx.app, s.refreshToken, csrf)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401]);
      for (const res of results.filter((r) => r.statusCode === 401)) assertProblem(res, 401, 'Invalid refresh token');
    });

    test('the admin claim is copied from the old refresh token (spec §4.1 rule 9.6)', async () => {
      const admin = await newAdminSession(ctx);
      const res = await refreshSession(ctx.app, admin.refreshToken);
      assert.equal(res.statusCode, 200);
      assert.equal(decodeJwt(res.json().access_token).payload.admin, true);
      assert.equal(decodeJwt(cookieValue(res, REFRESH)!).payload.admin, true);
      const all = await ctx.app.inject({
        method: 'GET',
        url: '/api/auth/admin/all',
        headers: bearer(res.json().access_token),
      });
      assert.equal(all.statusCode, 200);
    });
  },
  { REFRESH_REUSE_GRACE_SECONDS: '0' },
); // theft detected at once here; the grace is tested in revocation-race.test.ts
