import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { assertProblem, bearer, refreshSession } from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName } from '../helpers/harness.js';
import { assertThrottled, loginAttempt, THROTTLE_ON } from '../security/support.js';

/**
 * Security review of issue #37: PUT and DELETE /auth/owner checked the password without counting
 * the attempt anywhere, so a stolen access token could guess it from many addresses. They now
 * count against the caller's session, as re-authentication does (sessions/session-lockout.ts): the
 * same thresholds as logins, 429 while locked, cleared by the right password, and never the
 * account's login lockout, which strangers can trip.
 */

frozenDate();
const WRONG = 'not-the-password-at-all';
const NEW_PASSWORD = 'amber-Falcon-meadow-77-softly-x';

forEachDatabase('own account: password checks limited per session', (ctx) => {
  const change = (on: FastifyInstance, token: string, oldPassword: string, newPassword = NEW_PASSWORD) =>
    on.inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: bearer(token),
      payload: { old_password: oldPassword, new_password: newPassword },
    });
  const remove = (on: FastifyInstance, token: string, password: string) =>
    on.inject({ method: 'DELETE', url: '/api/auth/owner', headers: bearer(token), payload: { password } });
  const endOthers = (on: FastifyInstance, token: string, password: string) =>
    on.inject({ method: 'POST', url: '/api/auth/sessions/end-others', headers: bearer(token), payload: { password } });
  /** An account with `sessions` logins, then an app with throttling on and a limit of `failures`. */
  const setUp = async (failures: number, sessions = 1) => {
    const { username } = await signup(ctx.app, uniqueName('owner'));
    const logins = [];
    for (let i = 0; i < sessions; i++) logins.push(await login(ctx.app, username));
    const app = await ctx.rebuild({ ...THROTTLE_ON, RATE_LIMIT_LOGIN_FAILURES: String(failures) });
    return { username, logins, app };
  };

  test('N wrong old passwords (PUT and DELETE alike): the next is 429 even when right; the login still works', async () => {
    const {
      username,
      logins: [session],
      app,
    } = await setUp(3);
    try {
      assertProblem(await change(app, session!.accessToken, WRONG), 401, 'Invalid credentials');
      assertProblem(await remove(app, session!.accessToken, WRONG), 401, 'Invalid credentials');
      assertProblem(await change(app, session!.accessToken, `${WRONG}2`), 401, 'Invalid credentials');
      assertThrottled(await change(app, session!.accessToken, GOOD_PASSWORD), 60);
      assertThrottled(await remove(app, session!.accessToken, GOOD_PASSWORD), 60);
      assert.equal((await refreshSession(app, session!.refreshToken)).statusCode, 200, 'nothing changed');
      // Another counter: the account's login is not locked.
      assert.equal((await loginAttempt(app, username, GOOD_PASSWORD)).statusCode, 200);
    } finally {
      await ctx.rebuild();
    }
  });

  test('with the account locked by failed logins, the signed-in owner ends the other sessions and changes the password', async () => {
    const {
      username,
      logins: [owner, other],
      app,
    } = await setUp(2, 2);
    try {
      for (let i = 0; i < 2; i++) assert.equal((await loginAttempt(app, username, WRONG)).statusCode, 401);
      assertThrottled(await loginAttempt(app, username, GOOD_PASSWORD), 60);
      const ended = await endOthers(app, owner!.accessToken, GOOD_PASSWORD);
      assert.equal(ended.statusCode, 200, ended.body);
      assert.equal((await refreshSession(app, other!.refreshToken)).statusCode, 401);
      const changed = await change(app, ended.json().access_token, GOOD_PASSWORD);
      assert.equal(changed.statusCode, 200, changed.body);
    } finally {
      await ctx.rebuild();
    }
  });

  test("a thief's wrong guesses lock only the stolen session: the owner's changes the password", async () => {
    const {
      logins: [owner, stolen],
      app,
    } = await setUp(3, 2);
    try {
      for (let i = 0; i < 3; i++)
        assertProblem(await change(app, stolen!.accessToken, `${WRONG}${i}`), 401, 'Invalid credentials');
      assertThrottled(await change(app, stolen!.accessToken, GOOD_PASSWORD), 60);
      const changed = await change(app, owner!.accessToken, GOOD_PASSWORD);
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal((await refreshSession(app, stolen!.refreshToken)).statusCode, 401, 'the stolen session is over');
    } finally {
      await ctx.rebuild();
    }
  });

  test('parallel wrong old passwords get no more checks than the limit allows', async () => {
    const {
      logins: [session],
      app,
    } = await setUp(3);
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => change(app, session!.accessToken, `${WRONG}${i}`)),
      );
      const statuses = results.map((r) => r.statusCode);
      assert.equal(statuses.filter((code) => code === 401).length, 3, statuses.join(','));
      for (const res of results.filter((r) => r.statusCode !== 401)) assertThrottled(res, 60);
    } finally {
      await ctx.rebuild();
    }
  });

  test('the right password clears the count: two wrong, one right, two wrong is not three in a row', async () => {
    const {
      logins: [session],
      app,
    } = await setUp(3);
    try {
      for (let i = 0; i < 2; i++)
        assertProblem(await change(app, session!.accessToken, WRONG), 401, 'Invalid credentials');
      // Right, with a new password the rules refuse: the old one was checked, nothing changes.
      assert.equal((await change(app, session!.accessToken, GOOD_PASSWORD, 'short')).statusCode, 400);
      for (let i = 0; i < 3; i++)
        assertProblem(await change(app, session!.accessToken, WRONG), 401, 'Invalid credentials');
      assertThrottled(await change(app, session!.accessToken, GOOD_PASSWORD), 60);
    } finally {
      await ctx.rebuild();
    }
  });
});
