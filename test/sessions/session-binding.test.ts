import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { assertProblem, bearer, cookieValue, newAdminSession, REFRESH, refreshSession } from '../helpers/auth.js';
import {
  buildTestApp,
  forEachDatabase,
  GOOD_PASSWORD,
  login,
  type Session,
  type TestContext,
} from '../helpers/harness.js';

/**
 * Access tokens bound to their session (CONTRACT.md part 3; issue #37, finding 1): once the session
 * an access token was issued with has ended, every /api/auth route that takes an access token
 * refuses it (401) at once, on every instance; the notes routes keep taking it until it expires.
 */
const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';

/** The routes of the finding, and one admin route: each must refuse the stale token. */
async function assertRefusedOnAuth(app: FastifyInstance, token: string): Promise<void> {
  const as = (method: 'GET' | 'POST' | 'DELETE', url: string) => app.inject({ method, url, headers: bearer(token) });
  assertProblem(await as('GET', '/api/auth/sessions'), 401, 'Unauthorized');
  const endOthers = await as('POST', '/api/auth/sessions/end-others');
  assertProblem(endOthers, 401, 'Unauthorized');
  assert.equal(cookieValue(endOthers, REFRESH), undefined, 'no new session for a stale token');
  assertProblem(await as('DELETE', '/api/auth/sessions/00000000-0000-4000-8000-000000000000'), 401, 'Unauthorized');
  assertProblem(await as('GET', '/api/auth/me'), 401, 'Unauthorized');
  assertProblem(await as('GET', '/api/auth/admin/all'), 401, 'Unauthorized');
  assertProblem(await as('POST', '/api/auth/logout'), 401, 'Not authenticated');
}

/** An administrator (so that the admin route would answer 200) with two sessions: the victim's token and their other device. */
async function victim(ctx: TestContext): Promise<{ stolen: Session; device: Session }> {
  const stolen = await newAdminSession(ctx);
  return { stolen, device: await login(ctx.app, stolen.username) };
}

forEachDatabase('access tokens bound to their session', (ctx) => {
  test("the control: a live session's token is taken on every one of those routes", async () => {
    const { stolen } = await victim(ctx);
    for (const url of ['/api/auth/sessions', '/api/auth/me', '/api/auth/admin/all']) {
      assert.equal((await ctx.app.inject({ url, headers: stolen.auth })).statusCode, 200, url);
    }
  });

  test('after a password change, the old token is refused on /api/auth (it cannot start a session of its own)', async () => {
    const { stolen, device } = await victim(ctx);
    const changed = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: device.auth,
      payload: { old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    await assertRefusedOnAuth(ctx.app, stolen.accessToken);
    // The victim's new session is untouched by the attempts.
    assert.equal(
      (await ctx.app.inject({ url: '/api/auth/me', headers: bearer(changed.json().access_token as string) }))
        .statusCode,
      200,
    );
    assert.equal((await refreshSession(ctx.app, cookieValue(changed, REFRESH)!)).statusCode, 200);
  });

  test('after a logout, every token of the user is refused on /api/auth', async () => {
    const { stolen, device } = await victim(ctx);
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: device.auth })).statusCode,
      204,
    );
    await assertRefusedOnAuth(ctx.app, stolen.accessToken);
    await assertRefusedOnAuth(ctx.app, device.accessToken);
  });

  test("after its session is revoked from another device, the token is refused; the other device's is not", async () => {
    const { stolen, device } = await victim(ctx);
    const sessions = (await ctx.app.inject({ url: '/api/auth/sessions', headers: device.auth })).json() as Array<{
      id: string;
      current: boolean;
    }>;
    const target = sessions.find((s) => !s.current)!.id;
    assert.equal(
      (
        await ctx.app.inject({
          method: 'DELETE',
          url: `/api/auth/sessions/${target}`,
          headers: device.auth,
          payload: { password: device.password },
        })
      ).statusCode,
      204,
    );
    await assertRefusedOnAuth(ctx.app, stolen.accessToken);
    assert.equal((await ctx.app.inject({ url: '/api/auth/me', headers: device.auth })).statusCode, 200);
  });

  test('after "sign out everywhere else", the other sessions\' tokens are refused, and the caller\'s old one too', async () => {
    const { stolen, device } = await victim(ctx);
    const ended = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/sessions/end-others',
      headers: device.auth,
      payload: { password: device.password },
    });
    assert.equal(ended.statusCode, 200, ended.body);
    await assertRefusedOnAuth(ctx.app, stolen.accessToken);
    await assertRefusedOnAuth(ctx.app, device.accessToken);
    assert.equal(
      (await ctx.app.inject({ url: '/api/auth/me', headers: bearer(ended.json().access_token as string) })).statusCode,
      200,
    );
  });

  test('after the account is deleted, its tokens are refused on /api/auth', async () => {
    const { stolen, device } = await victim(ctx);
    await newAdminSession(ctx); // not the last administrator
    const res = await ctx.app.inject({
      method: 'DELETE',
      url: '/api/auth/owner',
      headers: device.auth,
      payload: { password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 204, res.body);
    await assertRefusedOnAuth(ctx.app, stolen.accessToken);
  });

  test('a token issued before a refresh stays good on /api/auth while its session lives', async () => {
    const { stolen } = await victim(ctx);
    const first = await refreshSession(ctx.app, stolen.refreshToken);
    assert.equal(first.statusCode, 200);
    assert.equal((await refreshSession(ctx.app, cookieValue(first, REFRESH)!)).statusCode, 200);
    for (const url of ['/api/auth/sessions', '/api/auth/me', '/api/auth/admin/all']) {
      assert.equal((await ctx.app.inject({ url, headers: stolen.auth })).statusCode, 200, url);
    }
    const sessions = (await ctx.app.inject({ url: '/api/auth/sessions', headers: stolen.auth })).json() as Array<{
      current: boolean;
    }>;
    assert.equal(sessions.filter((s) => s.current).length, 1, 'it still names its session');
  });

  test('the notes routes keep taking the token until it expires: stateless there', async () => {
    const { stolen, device } = await victim(ctx);
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: device.auth })).statusCode,
      204,
    );
    assert.equal((await ctx.app.inject({ url: '/api/notes', headers: stolen.auth })).statusCode, 200);
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: '/api/notes', headers: stolen.auth, payload: { title: 'x' } }))
        .statusCode,
      201,
    );
    assert.equal((await ctx.app.inject({ url: '/api/folders', headers: stolen.auth })).statusCode, 200);
  });

  test('two instances on one database: a logout on one is refused on the other at once', async () => {
    const other = await buildTestApp(ctx.config, ctx.database);
    try {
      const { stolen, device } = await victim(ctx);
      assert.equal((await other.inject({ url: '/api/auth/me', headers: stolen.auth })).statusCode, 200);
      assert.equal(
        (await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: device.auth })).statusCode,
        204,
      );
      await assertRefusedOnAuth(other, stolen.accessToken);
    } finally {
      await other.close();
    }
  });
});
