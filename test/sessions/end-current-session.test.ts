import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, cookieValue, decodeJwt, REFRESH, refreshSession } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, signup, type TestContext } from '../helpers/harness.js';

// Issue #42 item 6: "Log out" on one device ends that session only; POST /auth/logout ends them all.

async function loginAs(ctx: TestContext, username: string, userAgent: string) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { 'user-agent': userAgent },
    payload: { username, password: GOOD_PASSWORD },
  });
  assert.equal(res.statusCode, 200, res.body);
  const refreshToken = cookieValue(res, REFRESH)!;
  return {
    accessToken: res.json().access_token as string,
    refreshToken,
    sessionId: decodeJwt(refreshToken).payload.jti as string,
  };
}

forEachDatabase('DELETE /auth/sessions/current', (ctx) => {
  const end = (accessToken: string) =>
    ctx.app.inject({ method: 'DELETE', url: '/api/auth/sessions/current', headers: bearer(accessToken) });
  const sessionIds = async (accessToken: string) => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(accessToken) });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Array<{ id: string }>).map((s) => s.id);
  };

  test('ends the caller’s own session without a password, clears its cookies, and leaves the others signed in', async () => {
    const { username } = await signup(ctx.app);
    const laptop = await loginAs(ctx, username, 'laptop/1.0');
    const phone = await loginAs(ctx, username, 'phone/1.0');

    const res = await end(phone.accessToken);
    assert.equal(res.statusCode, 204, res.body);
    const cleared = res.cookies.find((c) => c.name === REFRESH);
    assert.equal(cleared?.value, '');
    assert.equal(cleared?.maxAge, 0);

    // The phone's refresh token is dead, and its access token is refused on /auth at once.
    assert.equal((await refreshSession(ctx.app, phone.refreshToken)).statusCode, 401);
    const me = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(phone.accessToken) });
    assert.equal(me.statusCode, 401);

    // The laptop goes on: listed, refreshing, and the phone's session gone from its list.
    assert.deepEqual(await sessionIds(laptop.accessToken), [laptop.sessionId]);
    assert.equal((await refreshSession(ctx.app, laptop.refreshToken)).statusCode, 200);
  });

  test('needs a signed-in caller; a second call (the session already ended) is refused like any ended token', async () => {
    const { username } = await signup(ctx.app);
    const only = await loginAs(ctx, username, 'laptop/1.0');
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: '/api/auth/sessions/current' })).statusCode, 401);
    assert.equal((await end(only.accessToken)).statusCode, 204);
    assert.equal((await end(only.accessToken)).statusCode, 401);
  });
});
