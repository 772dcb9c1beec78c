import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { assertProblem, bearer, newAdminSession, postRefresh, getCsrf, refreshSession } from '../helpers/auth.js';
import {
  cookie,
  forEachDatabase,
  GOOD_PASSWORD,
  login,
  signup,
  type Session,
  type TestContext,
} from '../helpers/harness.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';

const tokensOf = async (ctx: TestContext, userId: string) =>
  (await ctx.database.db.selectFrom('refresh_tokens').select('id').where('user_id', '=', userId).execute()).length;

const eventsOf = (ctx: TestContext, userId: string, kind: string) =>
  ctx.database.db
    .selectFrom('auth_events')
    .select(['outcome', 'detail'])
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .execute();

/**
 * The two ways an account is deleted: by its owner (with the password) and by an administrator.
 * Each prepares outside the race (the administrator is made first) and returns the DELETE to run.
 */
const deleters: Array<[string, (ctx: TestContext, victim: Session) => Promise<() => Promise<number>>]> = [
  [
    'its owner',
    async (ctx, victim) => async () =>
      (
        await ctx.app.inject({
          method: 'DELETE',
          url: '/api/auth/owner',
          headers: bearer(victim.accessToken),
          payload: { password: GOOD_PASSWORD },
        })
      ).statusCode,
  ],
  [
    'an administrator',
    async (ctx, victim) => {
      const admin = await newAdminSession(ctx);
      return async () =>
        (
          await ctx.app.inject({
            method: 'DELETE',
            url: `/api/auth/admin/${victim.userId}`,
            headers: bearer(admin.accessToken),
          })
        ).statusCode;
    },
  ],
];

/**
 * Two refreshes with one token at once: the first is held after taking the user row's lock, the
 * second is sent meanwhile and must queue behind it; both answers once the first is released.
 */
async function refreshTwiceAtOnce(ctx: TestContext, handle: ReturnType<typeof racedApp>, token: string) {
  const csrf = await getCsrf(handle.app, token);
  const gate = handle.pause.arm('refresh:locked');
  const first = postRefresh(handle.app, token, csrf);
  await gate.reached;
  const second = postRefresh(handle.app, token, csrf);
  const queued = await queuedBehindLock(ctx, second);
  gate.release();
  const [won, lost] = await Promise.all([first, second]);
  assert.equal(queued, true, 'the second refresh waits for the first to commit');
  return { won, lost };
}

forEachDatabase('revocation races', (ctx) => {
  const handle = racedApp(ctx);
  const { pause } = handle;
  // Read at test time: the app is built by a before() hook.
  let raced!: FastifyInstance;
  before(() => {
    raced = handle.app;
  });

  const loginRaced = (username: string) =>
    raced.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: GOOD_PASSWORD } });

  const enders: Array<[string, (s: Awaited<ReturnType<typeof login>>) => Promise<number>]> = [
    [
      'logout',
      async (s) =>
        (await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(s.accessToken) })).statusCode,
    ],
    [
      'password change',
      async (s) =>
        (
          await ctx.app.inject({
            method: 'PUT',
            url: '/api/auth/owner',
            headers: bearer(s.accessToken),
            payload: { old_password: GOOD_PASSWORD, new_password: GOOD_PASSWORD },
          })
        ).statusCode,
    ],
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
    const queued = await queuedBehindLock(ctx, logout);
    gate.release();
    const [refreshed, loggedOut] = await Promise.all([pending, logout]);
    assert.equal(queued, true, 'logout waits for the refresh to commit');
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

  for (const [by, deleter] of deleters) {
    test(`a login that checked the password before a deletion by ${by} answered is 401 and stores nothing`, async () => {
      const { id, username } = await signup(ctx.app);
      const victim = await login(ctx.app, username);
      const remove = await deleter(ctx, victim);
      const gate = pause.arm('login:verified');
      const pending = loginRaced(username);
      await gate.reached;
      // Nothing is locked at this step: the deletion runs to the end and answers first.
      const deleted = await remove();
      gate.release();
      assert.equal(deleted, 204);
      // The row the password was checked against is gone: the login's locked re-read finds nothing.
      assertProblem(await pending, 401, 'Invalid credentials');
      assert.equal(await tokensOf(ctx, id), 0);
      assert.deepEqual(
        (await eventsOf(ctx, id, 'login')).filter((e) => e.outcome === 'failure'),
        [{ outcome: 'failure', detail: 'sessions ended while logging in' }],
      );
    });

    test(`a refresh in flight while ${by} deletes the account: its new token is dead once the deletion answered`, async () => {
      const { id, username } = await signup(ctx.app);
      const victim = await login(ctx.app, username);
      const remove = await deleter(ctx, victim);
      const csrf = await getCsrf(raced, victim.refreshToken);
      const gate = pause.arm('refresh:locked');
      const pending = postRefresh(raced, victim.refreshToken, csrf);
      await gate.reached;
      const deletion = remove();
      const queued = await queuedBehindLock(ctx, deletion);
      gate.release();
      const [refreshed, deleted] = await Promise.all([pending, deletion]);
      assert.equal(queued, true, 'the deletion waits for the refresh to commit');
      assert.equal(deleted, 204);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const token = cookie(refreshed, 'app.refresh_token')!.value;
      assertProblem(await refreshSession(ctx.app, token), 401, 'Invalid refresh token');
      assert.equal(await tokensOf(ctx, id), 0);
    });
  }

  test('a refresh in flight while its session is revoked: the revoke waits, answers 204, and the new token is dead', async () => {
    const { username } = await signup(ctx.app);
    const s = await login(ctx.app, username);
    const list = await ctx.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(s.accessToken) });
    assert.equal(list.statusCode, 200);
    // The only session so far: the one s's refresh token belongs to.
    const [{ id: sessionId }] = list.json() as [{ id: string }];
    const other = await login(ctx.app, username);
    const csrf = await getCsrf(raced, s.refreshToken);
    const gate = pause.arm('refresh:locked');
    const pending = postRefresh(raced, s.refreshToken, csrf);
    await gate.reached;
    const revoke = ctx.app.inject({
      method: 'DELETE',
      url: `/api/auth/sessions/${sessionId}`,
      headers: bearer(other.accessToken),
      payload: { password: GOOD_PASSWORD },
    });
    const queued = await queuedBehindLock(ctx, revoke);
    gate.release();
    const [refreshed, revoked] = await Promise.all([pending, revoke]);
    assert.equal(queued, true, 'the revoke waits for the refresh to commit');
    // The refresh committed first (200), then the revoke found its new token in the session.
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(revoked.statusCode, 204, revoked.body);
    const token = cookie(refreshed, 'app.refresh_token')!.value;
    assertProblem(await refreshSession(ctx.app, token), 401, 'Invalid refresh token');
    // Only that session ended.
    assert.equal((await refreshSession(ctx.app, other.refreshToken)).statusCode, 200);
  });

  test('two refreshes with one token at once, within the grace: the second waits, is 401, and the session lives on', async () => {
    const { username } = await signup(ctx.app);
    const s = await login(ctx.app, username);
    const { won, lost } = await refreshTwiceAtOnce(ctx, handle, s.refreshToken);
    assert.equal(won.statusCode, 200, won.body);
    assertProblem(lost, 401, 'Invalid refresh token');
    assert.equal((await refreshSession(ctx.app, cookie(won, 'app.refresh_token')!.value)).statusCode, 200);
  });
});

// Sequential replay after the grace (successor token then 401) is in refresh.test.ts, which runs with
// REFRESH_REUSE_GRACE_SECONDS=0 ("reuse: a second use is 401, and it revokes the tokens rotated from it").
forEachDatabase(
  'revocation races, no grace',
  (ctx) => {
    const handle = racedApp(ctx);

    test("two refreshes with one token at once, the grace off: the loser revokes the whole login, the winner's token too", async () => {
      const { id, username } = await signup(ctx.app);
      const s = await login(ctx.app, username);
      const other = await login(ctx.app, username);
      const { won, lost } = await refreshTwiceAtOnce(ctx, handle, s.refreshToken);
      assert.equal(won.statusCode, 200, won.body);
      assertProblem(lost, 401, 'Invalid refresh token');
      assertProblem(
        await refreshSession(ctx.app, cookie(won, 'app.refresh_token')!.value),
        401,
        'Invalid refresh token',
      );
      assert.equal((await eventsOf(ctx, id, 'refresh_reuse')).length, 1);
      // Theft detection ends that login only.
      assert.equal((await refreshSession(ctx.app, other.refreshToken)).statusCode, 200);
    });
  },
  { REFRESH_REUSE_GRACE_SECONDS: '0' },
);
