import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  assertProblem,
  bearer,
  cookieValue,
  decodeJwt,
  getCsrf,
  postRefresh,
  REFRESH,
  refreshSession,
} from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, signup, type TestContext } from '../helpers/harness.js';

const clock = frozenDate();

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';

interface Login {
  userId: string;
  accessToken: string;
  refreshToken: string;
  /** The session id: the first refresh token's jti (the family id). */
  sessionId: string;
}

/** Logs in with a User-Agent of its own, so that sessions can be told apart. */
async function loginAs(ctx: TestContext, username: string, userAgent: string): Promise<Login> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { 'user-agent': userAgent },
    payload: { username, password: GOOD_PASSWORD },
  });
  assert.equal(res.statusCode, 200, res.body);
  const accessToken = res.json().access_token as string;
  const refreshToken = cookieValue(res, REFRESH)!;
  const refresh = decodeJwt(refreshToken).payload;
  return { userId: refresh.sub as string, accessToken, refreshToken, sessionId: refresh.jti as string };
}

forEachDatabase('GET and DELETE /auth/sessions', (ctx) => {
  const list = (accessToken: string) =>
    ctx.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(accessToken) });
  const revoke = (accessToken: string, id: string) =>
    ctx.app.inject({
      method: 'DELETE',
      url: `/api/auth/sessions/${id}`,
      headers: bearer(accessToken),
      payload: { password: GOOD_PASSWORD },
    });
  const sessionsOf = async (accessToken: string) => {
    const res = await list(accessToken);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Array<{
      id: string;
      created_at: string;
      last_used_at: string;
      user_agent: string | null;
      ip_address: string | null;
    }>;
  };

  test("one entry per login, newest first, with exactly {id, created_at, last_used_at, user_agent, ip_address, current}; current is the caller's own", async () => {
    const { username } = await signup(ctx.app);
    const first = await loginAs(ctx, username, 'laptop/1.0');
    clock.tick();
    const second = await loginAs(ctx, username, 'phone/2.0');
    clock.tick();
    const third = await loginAs(ctx, username, 'tablet/3.0');
    const other = await loginAs(ctx, (await signup(ctx.app)).username, 'elsewhere/1.0');

    const res = await list(second.accessToken);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'no-store');
    const sessions = res.json() as Array<Record<string, unknown>>;
    assert.deepEqual(
      sessions.map((s) => s.id),
      [third.sessionId, second.sessionId, first.sessionId],
    );
    assert.ok(!sessions.some((s) => s.id === other.sessionId), "another user's session is not listed");
    for (const [session, agent] of [
      [sessions[0]!, 'tablet/3.0'],
      [sessions[1]!, 'phone/2.0'],
      [sessions[2]!, 'laptop/1.0'],
    ] as const) {
      assert.deepEqual(Object.keys(session), [
        'id',
        'created_at',
        'last_used_at',
        'user_agent',
        'ip_address',
        'current',
      ]);
      assert.match(String(session.created_at), TIMESTAMP);
      assert.equal(session.last_used_at, session.created_at, 'a session never refreshed was last used when it began');
      assert.equal(session.user_agent, agent);
      assert.equal(session.ip_address, '127.0.0.1');
    }
    assert.ok(String(sessions[0]!.created_at) > String(sessions[2]!.created_at));
    assert.deepEqual(
      sessions.map((s) => s.current),
      [false, true, false],
      "asked with the second login's token",
    );
    assert.deepEqual(
      (await list(third.accessToken)).json().map((s: { current: boolean }) => s.current),
      [true, false, false],
    );
  });

  test('never a token or a token hash in the list', async () => {
    const { username } = await signup(ctx.app);
    const s = await loginAs(ctx, username, 'agent');
    const body = (await list(s.accessToken)).body;
    const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
    for (const secret of [s.refreshToken, s.accessToken, sha256(s.refreshToken), s.refreshToken.split('.')[2]!]) {
      assert.ok(!body.includes(secret));
    }
  });

  test("a refresh keeps the session: same id and start, later last_used_at, the refreshing client's details", async () => {
    const { username } = await signup(ctx.app);
    const s = await loginAs(ctx, username, 'browser/1.0');
    const [before] = await sessionsOf(s.accessToken);
    clock.tick();
    const res = await postRefresh(ctx.app, s.refreshToken, await getCsrf(ctx.app, s.refreshToken), {
      'user-agent': 'browser/1.1',
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = await sessionsOf(res.json().access_token);
    assert.equal(after.length, 1);
    assert.equal(after[0]!.id, s.sessionId);
    assert.equal(after[0]!.created_at, before!.created_at);
    assert.ok(after[0]!.last_used_at > before!.last_used_at, `${after[0]!.last_used_at} > ${before!.last_used_at}`);
    assert.equal(after[0]!.user_agent, 'browser/1.1');
    assert.equal(
      (after[0] as { current?: boolean }).current,
      true,
      'the refreshed access token belongs to the same session',
    );
    assert.equal(
      (await sessionsOf(s.accessToken))[0]!.id,
      s.sessionId,
      'so does the one from before the refresh, until it expires',
    );
    assert.equal(((await sessionsOf(s.accessToken))[0] as { current?: boolean }).current, true);
  });

  test('logout ends every session; a password change leaves only the new one', async () => {
    const { username } = await signup(ctx.app);
    const a = await loginAs(ctx, username, 'a');
    await loginAs(ctx, username, 'b');
    const changed = await ctx.app.inject({
      method: 'PUT',
      url: '/api/auth/owner/',
      headers: { ...bearer(a.accessToken), 'user-agent': 'c' },
      payload: { old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const newSessionId = decodeJwt(cookieValue(changed, REFRESH)!).payload.jti;
    // The change ended a's session, and a's access token with it (test/sessions/session-binding.test.ts).
    const renewed = changed.json().access_token as string;
    assert.deepEqual(
      (await sessionsOf(renewed)).map((s) => [s.id, s.user_agent]),
      [[newSessionId, 'c']],
    );
    const out = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(renewed) });
    assert.equal(out.statusCode, 204);
    assertProblem(await list(renewed), 401, 'Unauthorized');
    assertProblem(await refreshSession(ctx.app, cookieValue(changed, REFRESH)!), 401, 'Invalid refresh token');
  });

  test('DELETE revokes that session only: 204, no body; its refresh token is dead, the others live', async () => {
    const { username } = await signup(ctx.app);
    const keep = await loginAs(ctx, username, 'keep');
    const drop = await loginAs(ctx, username, 'drop');
    // Rotate the session first: revoking must reach the current token, not just the first one.
    const rotated = await refreshSession(ctx.app, drop.refreshToken);
    assert.equal(rotated.statusCode, 200);
    const current = cookieValue(rotated, REFRESH)!;

    const res = await revoke(keep.accessToken, drop.sessionId);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-type'], undefined);
    assert.deepEqual(
      (await sessionsOf(keep.accessToken)).map((s) => s.id),
      [keep.sessionId],
    );
    assertProblem(await refreshSession(ctx.app, current), 401, 'Invalid refresh token');
    assert.equal((await refreshSession(ctx.app, keep.refreshToken)).statusCode, 200);
    // Its access tokens end with it on /api/auth; keep's, issued before keep's refresh, live on.
    assertProblem(await list(drop.accessToken), 401, 'Unauthorized');
    // Gone now: a second DELETE finds nothing.
    assertProblem(await revoke(keep.accessToken, drop.sessionId), 404, 'Session not found');
  });

  test('the id is case-insensitive', async () => {
    const { username } = await signup(ctx.app);
    const s = await loginAs(ctx, username, 'x');
    assert.equal((await revoke(s.accessToken, s.sessionId.toUpperCase())).statusCode, 204);
    // The caller ended its own session: its access token is refused from now on.
    assertProblem(await list(s.accessToken), 401, 'Unauthorized');
    assert.deepEqual(
      await sessionsOf((await loginAs(ctx, username, 'y')).accessToken).then((l) => l.map((x) => x.user_agent)),
      ['y'],
    );
  });

  test("another user's session or an unknown id: 404 Session not found, and nothing is revoked", async () => {
    const mine = await loginAs(ctx, (await signup(ctx.app)).username, 'mine');
    const theirs = await loginAs(ctx, (await signup(ctx.app)).username, 'theirs');
    assertProblem(await revoke(mine.accessToken, theirs.sessionId), 404, 'Session not found');
    assertProblem(await revoke(mine.accessToken, '00000000-0000-4000-8000-000000000000'), 404, 'Session not found');
    assert.deepEqual(
      (await sessionsOf(theirs.accessToken)).map((s) => s.id),
      [theirs.sessionId],
    );
    assert.equal((await refreshSession(ctx.app, theirs.refreshToken)).statusCode, 200);
  });

  test('a malformed id: 400 Invalid session ID', async () => {
    const s = await loginAs(ctx, (await signup(ctx.app)).username, 'x');
    for (const id of ['nope', '123', `${s.sessionId}0`, s.sessionId.replaceAll('-', ''), '%20']) {
      assertProblem(await revoke(s.accessToken, id), 400, 'Invalid session ID');
    }
    assert.equal((await sessionsOf(s.accessToken)).length, 1);
  });

  test('without a valid access token: 401 on both routes', async () => {
    const s = await loginAs(ctx, (await signup(ctx.app)).username, 'x');
    const cases: LightMyRequestResponse[] = [
      await ctx.app.inject({ method: 'GET', url: '/api/auth/sessions' }),
      await ctx.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${s.sessionId}` }),
      await list(s.refreshToken),
      await revoke(s.refreshToken, s.sessionId),
    ];
    for (const res of cases) assertProblem(res, 401, 'Unauthorized');
    assert.equal((await sessionsOf(s.accessToken)).length, 1);
  });

  test('theft detection: replaying a rotated token after the grace revokes its session; other sessions live on', async () => {
    const { username } = await signup(ctx.app);
    const victim = await loginAs(ctx, username, 'victim');
    const other = await loginAs(ctx, username, 'other');
    const rotated = await refreshSession(ctx.app, victim.refreshToken);
    assert.equal(rotated.statusCode, 200);
    // The rotation is moved a minute into the past, beyond REFRESH_REUSE_GRACE_SECONDS (10).
    await ctx.database.db
      .updateTable('refresh_tokens')
      .set({ revoked_at: new Date(Date.now() - 60_000).toISOString() })
      .where('token_hash', '=', createHash('sha256').update(victim.refreshToken).digest('hex'))
      .execute();
    // The stolen copy of the old token comes back.
    assertProblem(await refreshSession(ctx.app, victim.refreshToken), 401, 'Invalid refresh token');
    assert.deepEqual(
      (await sessionsOf(other.accessToken)).map((s) => s.id),
      [other.sessionId],
    );
    assertProblem(await refreshSession(ctx.app, cookieValue(rotated, REFRESH)!), 401, 'Invalid refresh token');
    assert.equal((await refreshSession(ctx.app, other.refreshToken)).statusCode, 200);
  });

  test('concurrent refreshes with one token: one 200, the losers 401 within REFRESH_REUSE_GRACE_SECONDS, and the session lives on', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await loginAs(ctx, (await signup(ctx.app)).username, 'racer');
      const csrf = await getCsrf(ctx.app, s.refreshToken);
      const results = await Promise.all(Array.from({ length: 4 }, () => postRefresh(ctx.app, s.refreshToken, csrf)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401, 401]);
      const winner = results.find((r) => r.statusCode === 200)!;
      // Two tabs, not theft: the losers came within the grace, so the winner's token still works.
      assert.equal((await refreshSession(ctx.app, cookieValue(winner, REFRESH)!)).statusCode, 200);
      assert.equal((await sessionsOf(s.accessToken)).length, 1);
    }
  });
});
