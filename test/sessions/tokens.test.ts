import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { assertProblem, bearer, claims, decodeJwt, forgeToken, nowSeconds, unsignedToken } from '../helpers/auth.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';

forEachDatabase('bearer tokens', (ctx) => {
  const me = (authorization?: string) =>
    ctx.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: authorization === undefined ? {} : { authorization },
    });

  test('Authorization: "bearer" in any case, exactly two whitespace-separated fields', async () => {
    const s = await newSession(ctx.app);
    const t = s.accessToken;
    for (const header of [
      `Bearer ${t}`,
      `bearer ${t}`,
      `BEARER ${t}`,
      `bEaReR ${t}`,
      `Bearer   ${t}`,
      `Bearer\t${t}`,
      `Bearer \t ${t}`,
    ]) {
      const res = await me(header);
      assert.equal(res.statusCode, 200, JSON.stringify(header));
      assert.equal(res.json().id, s.userId);
    }
  });

  test('any other Authorization header is 401 Unauthorized', async () => {
    const s = await newSession(ctx.app);
    const t = s.accessToken;
    const bad = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `${t}`,
      `Bearer ${t} extra`,
      `Bearer ${t} ${t}`,
      `Bearer${t}`,
      `Basic ${t}`,
      `Token ${t}`,
      `Bearer: ${t}`,
      `Bearerx ${t}`,
      `Bearer ${t}x`,
      `Bearer ${t.slice(0, -2)}`,
      'Bearer not.a.jwt',
      'Bearer ....',
    ];
    for (const header of bad) assertProblem(await me(header), 401, 'Unauthorized');
  });

  test('only HS256 with the configured secret: none, HS384, HS512, a wrong key and tampering are 401', async () => {
    const s = await newSession(ctx.app);
    // The session's own jti: an access token is good on /api/auth only while its session lives.
    const payload = claims(s.userId, 'access', { jti: decodeJwt(s.accessToken).payload.jti });
    // The control: the same claims, signed properly, are accepted.
    assert.equal((await me(`Bearer ${forgeToken(payload)}`)).statusCode, 200);
    const [head, body, signature] = s.accessToken.split('.');
    const adminBody = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), admin: true }),
    ).toString('base64url');
    const forged = [
      unsignedToken(payload),
      unsignedToken(payload).slice(0, -1),
      forgeToken(payload, { algorithm: 'HS384' }),
      forgeToken(payload, { algorithm: 'HS512' }),
      forgeToken(payload, { key: 'some-other-secret-0123456789abcdefghijklmn' }),
      `${head}.${adminBody}.${signature}`,
    ];
    for (const token of forged) assertProblem(await me(`Bearer ${token}`), 401, 'Unauthorized');
    const all = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/admin/all',
      headers: bearer(`${head}.${adminBody}.${signature}`),
    });
    assertProblem(all, 401, 'Unauthorized');
  });

  test('an expired token and one not valid yet are 401', async () => {
    const s = await newSession(ctx.app);
    const now = nowSeconds();
    const expired = forgeToken(claims(s.userId, 'access', { iat: now - 1000, nbf: now - 1000, exp: now - 100 }));
    const early = forgeToken(claims(s.userId, 'access', { iat: now, nbf: now + 600, exp: now + 900 }));
    assertProblem(await me(`Bearer ${expired}`), 401, 'Unauthorized');
    assertProblem(await me(`Bearer ${early}`), 401, 'Unauthorized');
  });

  test('missing or mistyped claims are 401', async () => {
    const s = await newSession(ctx.app);
    const broken = [
      claims(s.userId, 'access', { type: undefined }),
      claims(s.userId, 'access', { type: 'id' }),
      claims(s.userId, 'access', { sub: undefined }),
      claims(s.userId, 'access', { sub: 42 }),
      claims(s.userId, 'access', { admin: 'true' }),
      claims(s.userId, 'access', { exp: undefined }),
      claims(s.userId, 'access', { jti: undefined }),
    ];
    for (const payload of broken) assertProblem(await me(`Bearer ${forgeToken(payload)}`), 401, 'Unauthorized');
  });

  test('a refresh token used as an access token is 401', async () => {
    const s = await newSession(ctx.app);
    assertProblem(await me(`Bearer ${s.refreshToken}`), 401, 'Unauthorized');
    const logout = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(s.refreshToken) });
    assertProblem(logout, 401, 'Not authenticated');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner/',
      headers: bearer(s.refreshToken),
      payload: { old_password: s.password, new_password: s.password },
    });
    assertProblem(put, 401, 'Unauthorized');
  });

  test('a sub that is not a UUID: 400 Invalid user ID on every route that loads the user', async () => {
    const token = forgeToken(claims('not-a-uuid'));
    assertProblem(await me(`Bearer ${token}`), 400, 'Invalid user ID');
    const routes = [
      { method: 'POST', url: '/api/auth/logout' },
      { method: 'PUT', url: '/api/auth/owner/', payload: { old_password: 'x', new_password: 'y' } },
      { method: 'DELETE', url: '/api/auth/owner/', payload: { password: 'x' } },
    ] as const;
    for (const route of routes)
      assertProblem(await ctx.app.inject({ ...route, headers: bearer(token) }), 400, 'Invalid user ID');
  });

  test('a sub naming no user has no session: 401 on /api/auth (CONTRACT.md part 3); 404 User not found where tokens are stateless', async () => {
    const token = forgeToken(claims(randomUUID()));
    assertProblem(await me(`Bearer ${token}`), 401, 'Unauthorized');
    const put = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: bearer(token),
      payload: { old_password: 'x', new_password: 'y' },
    });
    assertProblem(put, 401, 'Unauthorized');
    const del = await ctx.app.inject({
      method: 'DELETE',
      url: '/api/auth/owner',
      headers: bearer(token),
      payload: { password: 'x' },
    });
    assertProblem(del, 401, 'Unauthorized');
    const create = await ctx.app.inject({ method: 'POST', url: '/api/notes', headers: bearer(token), payload: {} });
    assertProblem(create, 404, 'User not found');
  });

  test('an upper-case sub still names its user', async () => {
    const s = await newSession(ctx.app);
    const res = await me(
      `Bearer ${forgeToken(claims(s.userId.toUpperCase(), 'access', { jti: decodeJwt(s.accessToken).payload.jti }))}`,
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, s.userId);
  });
});
