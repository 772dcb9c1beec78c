import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createPasswordHasher, type PasswordHasher } from '../../src/passwords/password-hasher.js';
import { POLICY_ORDER, registerRoutePolicy, type PolicyLayers, type PolicyStep } from '../../src/http/route-policy.js';
import { cookieParsing } from '../../src/sessions/cookie-plugin.js';
import { bearer, getCsrf, postRefresh, REFRESH } from '../helpers/auth.js';
import { cookie, forEachDatabase, GOOD_PASSWORD, login, problemOf, signup, testConfig } from '../helpers/harness.js';
import { assertThrottled, databaseUrlOf, THROTTLE_ON } from '../security/support.js';

test("the layers' hooks run in POLICY_ORDER at each stage, ahead of the route's own, whatever order they are given in", async () => {
  const ran: string[] = [];
  const app = Fastify();
  const layer = (step: PolicyStep) => () => ({
    onRequest: [async () => void ran.push(`onRequest ${step}`)],
    preHandler: [async () => void ran.push(`preHandler ${step}`)],
    onSend: [async (_request: unknown, _reply: unknown, payload: unknown) => (ran.push(`onSend ${step}`), payload)],
  });
  // Given backwards, and without `cookies`: a step left out adds nothing.
  const layers: PolicyLayers = {};
  for (const step of [...POLICY_ORDER].reverse()) if (step !== 'cookies') layers[step] = layer(step);
  registerRoutePolicy(app, layers);
  app.get(
    '/ordered',
    {
      config: { policy: { auth: 'public' } },
      onRequest: async () => void ran.push('onRequest route'),
      preHandler: async () => void ran.push('preHandler route'),
      onSend: async (_request, _reply, payload) => (ran.push('onSend route'), payload),
    },
    async () => ({ ok: true }),
  );
  const res = await app.inject({ url: '/ordered' });
  assert.equal(res.statusCode, 200);
  const expected = (stage: string) =>
    [...POLICY_ORDER.filter((step) => step !== 'cookies'), 'route'].map((step) => `${stage} ${step}`);
  assert.deepEqual(ran, [...expected('onRequest'), ...expected('preHandler'), ...expected('onSend')]);
  assert.deepEqual(POLICY_ORDER, [
    'limits',
    'shedding',
    'cookies',
    'access',
    'enrolment',
    'note',
    'lockout',
    'noStore',
  ]);
  await app.close();
});

test("a cookie route declared outside the cookie plugin's scope stops start-up", async () => {
  const app = Fastify();
  registerRoutePolicy(app, { cookies: cookieParsing });
  assert.throws(
    () => app.post('/api/auth/cookie/refresh', { config: { policy: { auth: 'cookie' } } }, async () => ({})),
    /cookie route \/api\/auth\/cookie\/refresh is declared outside the scope of registerCookies/,
  );
  await app.close();
});

forEachDatabase('policy order on the real routes', (ctx) => {
  test('limits before access: over the limit, a route that needs a token (or an administrator) answers 429, not 401 or 403', async () => {
    const user = await login(await ctx.rebuild(), (await signup(ctx.app)).username);
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_GLOBAL_PER_MINUTE: '4' });
    assert.equal((await app.inject({ url: '/api/notes' })).statusCode, 401);
    assert.equal((await app.inject({ url: '/api/notes', headers: bearer('not-a-token') })).statusCode, 401);
    assert.equal((await app.inject({ url: '/api/auth/admin/all', headers: user.auth })).statusCode, 403);
    assert.equal((await app.inject({ url: '/api/notes', headers: user.auth })).statusCode, 200);
    assertThrottled(await app.inject({ url: '/api/notes' }), 60);
    assertThrottled(await app.inject({ url: '/api/auth/admin/all', headers: user.auth }), 60);
    // no-store runs on the refusals of the steps before it.
    const sessions = await app.inject({ url: '/api/auth/sessions', headers: user.auth });
    assertThrottled(sessions, 60);
    assert.equal(sessions.headers['cache-control'], 'no-store');
  });

  test('limits, then shedding, then access: while the hasher is full, a password route refuses the anonymous with 503, and 429 once over the limit', async () => {
    let full = false;
    const real = createPasswordHasher();
    const hasher: PasswordHasher = {
      hash: (password) => real.hash(password),
      verify: (hash, password) => real.verify(hash, password),
      verifyDummy: (password) => real.verifyDummy(password),
      get depth() {
        return real.depth;
      },
      get full() {
        return full;
      },
    };
    const config = testConfig(databaseUrlOf(ctx.config.database), { ...THROTTLE_ON, RATE_LIMIT_LOGIN_PER_MINUTE: '2' });
    const app: FastifyInstance = await buildApp({ config, database: ctx.database, logger: false, hasher });
    try {
      const changePassword = () =>
        app.inject({ method: 'PUT', url: '/api/auth/owner', payload: { old_password: 'x', new_password: 'y' } });
      assert.equal((await changePassword()).statusCode, 401);
      full = true;
      const shed = await changePassword();
      assert.equal(shed.statusCode, 503, shed.body);
      assert.equal(problemOf(shed).code, 'busy');
      assert.equal(shed.headers['cache-control'], 'no-store');
      assertThrottled(await changePassword(), 60);
    } finally {
      full = false;
      await app.close();
    }
  });

  test('a cookie route parses its cookies before its own CSRF check, and after the limits', async () => {
    const { username } = await signup(await ctx.rebuild());
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_REFRESH_PER_MINUTE: '2' });
    const loggedIn = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: GOOD_PASSWORD },
    });
    const refreshToken = cookie(loggedIn, REFRESH)!.value;
    // The CSRF check reads its secret from the parsed cookies: it passes only if they were parsed first.
    const csrf = await getCsrf(app, refreshToken);
    const refreshed = await postRefresh(app, refreshToken, csrf);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    // The same pair without its secret cookie is refused by the CSRF check, not by the parsing.
    const noSecret = await postRefresh(app, refreshToken, undefined, { 'x-csrf-token': csrf.token });
    assert.equal(noSecret.statusCode, 403, noSecret.body);
    assertThrottled(
      await postRefresh(app, cookie(refreshed, REFRESH)!.value, await getCsrf(app, cookie(refreshed, REFRESH)!.value)),
      60,
    );
  });
});
