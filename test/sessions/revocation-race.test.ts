import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { assertProblem, bearer, postRefresh, getCsrf, refreshSession } from '../helpers/auth.js';
import { cookie, forEachDatabase, GOOD_PASSWORD, login, signup } from '../helpers/harness.js';

/** Pauses the first arrival at `step` until released; `reached` resolves once it is held there. */
function pauseAt() {
  let step: string | undefined;
  let reached!: () => void;
  let release!: () => void;
  let reachedP = Promise.resolve();
  let hold = Promise.resolve();
  return {
    arm(name: string) {
      step = name;
      reachedP = new Promise((r) => { reached = r; });
      hold = new Promise((r) => { release = r; });
      return { reached: reachedP, release: () => release() };
    },
    checkpoint: async (name: string) => {
      if (name !== step) return;
      step = undefined;
      reached();
      await hold;
    },
  };
}

forEachDatabase('revocation races', (ctx) => {
  const pause = pauseAt();
  let raced: FastifyInstance;
  before(async () => {
    raced = await buildApp({ config: ctx.config, database: ctx.database, logger: false, checkpoint: pause.checkpoint });
    await raced.ready();
  });
  after(async () => raced.close());

  const loginRaced = (username: string) =>
    raced.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: GOOD_PASSWORD } });

  const enders: Array<[string, (s: Awaited<ReturnType<typeof login>>) => Promise<number>]> = [
    ['logout', async (s) => (await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(s.accessToken) })).statusCode],
    ['password change', async (s) => (await ctx.app.inject({
      method: 'PUT', url: '/api/auth/owner', headers: bearer(s.accessToken),
      payload: { old_password: GOOD_PASSWORD, new_password: GOOD_PASSWORD },
    })).statusCode],
  ];

  for (const [name, end] of enders) {
    test(`a login that checked the password before a ${name} answered stores no usable token`, async () => {
      const { username } = await signup(ctx.app);
      const other = await login(ctx.app, username);
      const gate = pause.arm('login:verified');
      const pending = loginRaced(username);
      await gate.reached;
      assert.equal(await end(other), name === 'logout' ? 204 : 200);
      gate.release();
      const res = await pending;
      if (res.statusCode === 200) {
        const token = cookie(res, 'app.refresh_token')!.value;
        assertProblem(await refreshSession(ctx.app, token), 401, 'Invalid refresh token');
      } else {
        assertProblem(res, 401, 'Invalid credentials');
      }
    });
  }

  test('a refresh in flight while logout runs: its new token is dead once logout answered', async () => {
    const { username } = await signup(ctx.app);
    const s = await login(ctx.app, username);
    const csrf = await getCsrf(raced, s.refreshToken);
    const gate = pause.arm('refresh:locked');
    const pending = postRefresh(raced, s.refreshToken, csrf);
    await gate.reached;
    // Logout queues behind the refresh's lock on the user row; released, both finish.
    const logout = ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(s.accessToken) });
    gate.release();
    const [refreshed, loggedOut] = await Promise.all([pending, logout]);
    assert.equal(loggedOut.statusCode, 204);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const token = cookie(refreshed, 'app.refresh_token')!.value;
    assertProblem(await refreshSession(ctx.app, token), 401, 'Invalid refresh token');
  });

  test('two refreshes with one token: within the grace the loser is 401 and the session lives on', async () => {
    const { username } = await signup(ctx.app);
    const s = await login(ctx.app, username);
    const first = await refreshSession(ctx.app, s.refreshToken);
    assert.equal(first.statusCode, 200);
    assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
    const next = cookie(first, 'app.refresh_token')!.value;
    assert.equal((await refreshSession(ctx.app, next)).statusCode, 200);
  });
});
