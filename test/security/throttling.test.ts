import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cookie, forEachDatabase, GOOD_PASSWORD, login, problemOf, signup, uniqueName } from '../helpers/harness.js';
import { assertThrottled, loginAttempt, THROTTLE_ON } from './support.js';

const WRONG = 'not-the-password-at-all-1234';

// Each test starts from an unthrottled app (ctx.rebuild() with the harness defaults) to set up its
// accounts, then rebuilds with throttling on: a fresh set of counters per test.
forEachDatabase('security: throttling', (ctx) => {
  test('an account is locked after repeated failures: 429 with Retry-After, even for the right password', async () => {
    const { username } = await signup(await ctx.rebuild());
    const other = await signup(ctx.app);
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: '3' });

    for (let i = 0; i < 3; i++) assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(app, username, GOOD_PASSWORD), 60);
    // Counted on the normalized username, so changing case does not start a new count.
    assertThrottled(await loginAttempt(app, username.toUpperCase(), GOOD_PASSWORD), 60);
    // Other accounts are not affected.
    assert.equal((await loginAttempt(app, other.username, GOOD_PASSWORD)).statusCode, 200);
  });

  test('a successful login resets the failure count; the attempt that reaches the limit is still checked', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: '3' });

    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
      assert.equal((await loginAttempt(app, username, GOOD_PASSWORD)).statusCode, 200, `round ${round}`);
    }
    assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
  });

  test('parallel guesses cannot get more password checks than the limit allows', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: '3' });

    const results = await Promise.all(Array.from({ length: 12 }, () => loginAttempt(app, username, WRONG)));
    const statuses = results.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 3, statuses.join(','));
    for (const res of results.filter((r) => r.statusCode !== 401)) assertThrottled(res, 60);
  });

  test('per address: login attempts, whatever the account', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '3' });

    for (let i = 0; i < 3; i++) assert.equal((await loginAttempt(app, uniqueName('ghost'), WRONG)).statusCode, 401);
    assertThrottled(await loginAttempt(app, username, GOOD_PASSWORD), 60);
    // Another address still gets in.
    assert.equal((await loginAttempt(app, username, GOOD_PASSWORD, { remoteAddress: '192.0.2.7' })).statusCode, 200);
  });

  test('per address: password checks on the owner routes share the login budget', async () => {
    const { username } = await signup(await ctx.rebuild());
    const session = await login(ctx.app, username);
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '2' });

    const change = () =>
      app.inject({
        method: 'PUT',
        url: '/api/auth/owner',
        headers: session.auth,
        payload: { old_password: WRONG, new_password: `${GOOD_PASSWORD}-new` },
      });
    assert.equal((await change()).statusCode, 401);
    const remove = await app.inject({
      method: 'DELETE',
      url: '/api/auth/owner/',
      headers: session.auth,
      payload: { password: WRONG },
    });
    assert.equal(remove.statusCode, 401);
    assertThrottled(await change(), 60);
  });

  test('per address: signups', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_SIGNUP_PER_HOUR: '2' });
    await signup(app);
    await signup(app);
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { username: uniqueName(), password: GOOD_PASSWORD },
    });
    assertThrottled(res, 3600);
  });

  test('per address: refreshes, counted before the CSRF check', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_REFRESH_PER_MINUTE: '2' });
    const res = await loginAttempt(app, username, GOOD_PASSWORD);
    const refresh = () =>
      app.inject({
        method: 'POST',
        url: '/api/auth/cookie/refresh',
        cookies: { 'app.refresh_token': cookie(res, 'app.refresh_token')!.value },
      });
    assert.equal((await refresh()).statusCode, 403);
    assert.equal((await refresh()).statusCode, 403);
    assertThrottled(await refresh(), 60);
  });

  test('per address: breach checks of a password being typed, apart from signup', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_BREACH_CHECKS_PER_MINUTE: '2' });
    const check = (remoteAddress = '127.0.0.1') =>
      app.inject({
        method: 'POST',
        url: '/api/auth/password-rules/check',
        payload: { password: 'password' },
        remoteAddress,
      });
    for (let i = 0; i < 2; i++) assert.deepEqual((await check()).json(), { breached: true });
    assertThrottled(await check(), 60);
    // Another address still gets its answer; this one can still sign up (its own limit).
    assert.deepEqual((await check('192.0.2.9')).json(), { breached: true });
    assert.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/auth/signup',
          payload: { username: uniqueName(), password: GOOD_PASSWORD },
        })
      ).statusCode,
      201,
    );
  });

  test('global ceiling: every route counts, unknown ones too; health probes are exempt', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_GLOBAL_PER_MINUTE: '4' });
    assert.equal((await app.inject({ url: '/api/notes' })).statusCode, 401);
    assert.equal((await app.inject({ url: '/no/such/route' })).statusCode, 404);
    assert.equal((await app.inject({ url: '/api/auth/me' })).statusCode, 401);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: {} })).statusCode, 400);
    assertThrottled(await app.inject({ url: '/no/such/route' }), 60);
    assertThrottled(await app.inject({ url: '/api/openapi.json' }), 60);
    assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/api/notes', remoteAddress: '192.0.2.8' })).statusCode, 401);
  });

  test('global ceiling with CORS on: OPTIONS counts too, once, whichever route answers it', async () => {
    const app = await ctx.rebuild({
      ...THROTTLE_ON,
      RATE_LIMIT_GLOBAL_PER_MINUTE: '2',
      CORS_ORIGINS: 'https://app.example',
    });
    const options = (origin?: string) =>
      app.inject({ method: 'OPTIONS', url: '/api/notes', headers: origin === undefined ? {} : { origin } });
    assert.equal((await options()).statusCode, 405);
    assert.equal((await options('https://evil.example')).statusCode, 405);
    assertThrottled(await options('https://evil.example'), 60);
    assertThrottled(await app.inject({ url: '/api/notes' }), 60);
  });

  test('a throttled response is a complete problem document', async () => {
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_GLOBAL_PER_MINUTE: '1' });
    await app.inject({ url: '/api/notes' });
    const res = await app.inject({ url: '/api/notes' });
    const seconds = assertThrottled(res, 60);
    assert.deepEqual(problemOf(res), {
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: `Too many requests; retry in ${seconds} seconds`,
      code: 'too_many_requests',
      retry_after: seconds,
    });
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  });

  test('RATE_LIMIT=off turns every limit off', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({
      RATE_LIMIT: 'off',
      RATE_LIMIT_GLOBAL_PER_MINUTE: '1',
      RATE_LIMIT_LOGIN_PER_MINUTE: '1',
      RATE_LIMIT_LOGIN_FAILURES: '1',
    });
    for (let i = 0; i < 5; i++) assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
    assert.equal((await loginAttempt(app, username, GOOD_PASSWORD)).statusCode, 200);
  });
});
