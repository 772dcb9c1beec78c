import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { bearer } from '../helpers/auth.js';
import { listen, Stream } from '../helpers/event-stream.js';
import { buildTestApp, forEachDatabase, GOOD_PASSWORD, login, newSession, type Session } from '../helpers/harness.js';

/**
 * A live stream lasts no longer than what it was opened with (CONTRACT.md part 3): it ends within
 * 5 s of its access token's session ending, or of its personal token's deletion or expiry, on
 * every instance. Each test waits on the condition (the stream's end), bounded by that budget.
 */
const BUDGET_MS = 5000;
const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';

forEachDatabase('live streams end with their credentials', (ctx) => {
  // The signal alone: the sweep is far off, so an end within the budget is the signal's doing.
  let signalled: FastifyInstance;
  let base = '';
  const streams: Stream[] = [];
  const open = async (token: string, url = base) => {
    const stream = await Stream.open(url, token);
    streams.push(stream);
    return stream;
  };
  before(async () => {
    signalled = await buildTestApp(ctx.config, ctx.database, { liveTesting: { recheckMs: 600_000 } });
    base = await listen(signalled);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await signalled.close();
  });
  const call = (app: FastifyInstance, token: string, method: string, url: string, payload?: object) =>
    app.inject({ method: method as 'GET', url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) });

  /** The stream ended, and a change of the user's made after it never reached it. */
  async function assertEnded(stream: Stream, user: Session, token = user.accessToken): Promise<void> {
    await stream.until(() => stream.ended, BUDGET_MS);
    const id = (await call(signalled, token, 'POST', '/api/notes', { title: 'after the end' })).json().id as string;
    // A second stream of the same user, opened with a live token, hears the change: the first never will.
    const witness = await open((await login(signalled, user.username, user.password)).accessToken);
    await signalled.liveEvents.publish({ type: 'note.updated', data: { id }, users: [user.userId] });
    await witness.next('note.updated', id);
    assert.deepEqual(stream.events, []);
    witness.close();
  }

  test('an access token whose session has ended cannot open a stream (401)', async () => {
    const user = await newSession(signalled, 'sbopen');
    assert.equal((await call(signalled, user.accessToken, 'POST', '/api/auth/logout')).statusCode, 204);
    const stream = await open(user.accessToken);
    assert.equal(stream.status, 401);
  });

  test('logout ends the streams of every session of the user', async () => {
    const user = await newSession(signalled, 'sbout');
    const other = await login(signalled, user.username);
    const [mine, theirs] = [await open(user.accessToken), await open(other.accessToken)];
    assert.equal(mine.status, 200);
    assert.equal((await call(signalled, user.accessToken, 'POST', '/api/auth/logout')).statusCode, 204);
    await theirs.until(() => theirs.ended, BUDGET_MS);
    await mine.until(() => mine.ended, BUDGET_MS);
    assert.equal(signalled.liveEvents.count(user.userId), 0);
    // Notes routes still take the token (stateless there); the stream does not.
    await assertEnded(mine, user);
  });

  test('a password change ends the streams of the sessions it ended, not the new one', async () => {
    const user = await newSession(signalled, 'sbpass');
    const old = await open(user.accessToken);
    const changed = await call(signalled, user.accessToken, 'PUT', '/api/auth/owner', {
      old_password: GOOD_PASSWORD,
      new_password: NEW_PASSWORD,
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const renewed = await open(changed.json().access_token as string);
    await old.until(() => old.ended, BUDGET_MS);
    assert.equal(renewed.ended, false);
    assert.equal(signalled.liveEvents.count(user.userId), 1);
    renewed.close();
    await assertEnded(old, { ...user, password: NEW_PASSWORD });
  });

  test("revoking one session ends its streams only; the other session's stream goes on", async () => {
    const user = await newSession(signalled, 'sbrev');
    const other = await login(signalled, user.username);
    const [keep, drop] = [await open(user.accessToken), await open(other.accessToken)];
    const sessions = (await call(signalled, user.accessToken, 'GET', '/api/auth/sessions')).json() as Array<{
      id: string;
      current: boolean;
    }>;
    const target = sessions.find((s) => !s.current)!.id;
    assert.equal(
      (await call(signalled, user.accessToken, 'DELETE', `/api/auth/sessions/${target}`, { password: user.password }))
        .statusCode,
      204,
    );
    await drop.until(() => drop.ended, BUDGET_MS);
    assert.equal(keep.ended, false);
    const id = (await call(signalled, user.accessToken, 'POST', '/api/notes', { title: 'still here' })).json()
      .id as string;
    await keep.next('note.created', id);
  });

  test("a deleted personal token ends its stream; another token's stream goes on", async () => {
    const user = await newSession(signalled, 'sbpat');
    const create = async (name: string) => {
      const res = await call(signalled, user.accessToken, 'POST', '/api/auth/tokens', {
        name,
        scopes: ['notes:read'],
        password: GOOD_PASSWORD,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; token: string };
    };
    const [doomed, kept] = [await create('doomed'), await create('kept')];
    const [gone, stays] = [await open(doomed.token), await open(kept.token)];
    assert.equal(gone.status, 200);
    assert.equal((await call(signalled, user.accessToken, 'DELETE', `/api/auth/tokens/${doomed.id}`)).statusCode, 204);
    await gone.until(() => gone.ended, BUDGET_MS);
    assert.equal(stays.ended, false);
    assert.equal(signalled.liveEvents.count(user.userId), 1);
    stays.close();
    await assertEnded(gone, user);
  });

  test("account deletion ends the account's streams", async () => {
    const user = await newSession(signalled, 'sbdel');
    const stream = await open(user.accessToken);
    assert.equal(
      (
        await signalled.inject({
          method: 'DELETE',
          url: '/api/auth/owner',
          headers: user.auth,
          payload: { password: GOOD_PASSWORD },
        })
      ).statusCode,
      204,
    );
    await stream.until(() => stream.ended, BUDGET_MS);
    assert.equal(signalled.liveEvents.count(user.userId), 0);
  });

  test('without a signal, the periodic re-check ends a stream whose session ended or whose personal token expired', async () => {
    const swept = await buildTestApp(ctx.config, ctx.database, { liveTesting: { recheckMs: 50 } });
    try {
      const url = await listen(swept);
      const user = await newSession(swept, 'sbsweep');
      const res = await call(swept, user.accessToken, 'POST', '/api/auth/tokens', {
        name: 'soon',
        scopes: ['notes:read'],
        password: GOOD_PASSWORD,
        expires_in_days: 1,
      });
      const pat = res.json() as { id: string; token: string };
      const [session, personal] = [await open(user.accessToken, url), await open(pat.token, url)];
      assert.equal(personal.status, 200);
      // Behind the bus's back, as the `vellum` CLI's password reset or another process would.
      await ctx.database.db
        .updateTable('refresh_tokens')
        .set({ revoked: true })
        .where('user_id', '=', user.userId)
        .execute();
      await ctx.database.db
        .updateTable('access_tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', pat.id)
        .execute();
      await session.until(() => session.ended, BUDGET_MS);
      await personal.until(() => personal.ended, BUDGET_MS);
      assert.equal(swept.liveEvents.count(user.userId), 0);
    } finally {
      await swept.close();
    }
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  if (redisUrl !== undefined && ctx.kind === 'sqlite') {
    test('with REDIS_URL, a personal token deleted on one instance ends its stream on the other', async () => {
      const config = { ...ctx.config, redisUrl, redisKeyPrefix: `test-binding-${Date.now()}:` };
      const [a, b] = [
        await buildTestApp(config, ctx.database, { liveTesting: { recheckMs: 600_000 } }),
        await buildTestApp(config, ctx.database, { liveTesting: { recheckMs: 600_000 } }),
      ];
      try {
        const url = await listen(b);
        const user = await newSession(a, 'sbredis');
        const res = await call(a, user.accessToken, 'POST', '/api/auth/tokens', {
          name: 'script',
          scopes: ['notes:read'],
          password: GOOD_PASSWORD,
        });
        const pat = res.json() as { id: string; token: string };
        const stream = await open(pat.token, url);
        // B's SUBSCRIBE starts with it, unawaited: an event it passes on proves it is up.
        for (let i = 0; ; i++) {
          await a.liveEvents.publish({ type: 'note.updated', data: { id: `probe${i}` }, users: [user.userId] });
          if (
            await stream.next('note.updated', `probe${i}`, 250).then(
              () => true,
              () => false,
            )
          )
            break;
          assert.ok(i < 40, 'the other instance never heard the channel');
        }
        assert.equal((await call(a, user.accessToken, 'DELETE', `/api/auth/tokens/${pat.id}`)).statusCode, 204);
        await stream.until(() => stream.ended, BUDGET_MS);
        assert.equal(b.liveEvents.count(user.userId), 0);
      } finally {
        await a.close();
        await b.close();
      }
    });
  }

  if (ctx.kind === 'postgres') {
    test('two instances on one PostgreSQL: a logout on one ends the stream on the other', async () => {
      const other = await buildTestApp(ctx.config, ctx.database, { liveTesting: { recheckMs: 600_000 } });
      try {
        const url = await listen(other);
        const user = await newSession(signalled, 'sbtwo');
        const stream = await open(user.accessToken, url);
        // The other instance's LISTEN starts with it, unawaited: an event it passes on proves it is up.
        for (let i = 0; ; i++) {
          await signalled.liveEvents.publish({ type: 'note.updated', data: { id: `probe${i}` }, users: [user.userId] });
          if (
            await stream.next('note.updated', `probe${i}`, 250).then(
              () => true,
              () => false,
            )
          )
            break;
          assert.ok(i < 40, 'the other instance never heard the channel');
        }
        assert.equal((await call(signalled, user.accessToken, 'POST', '/api/auth/logout')).statusCode, 204);
        await stream.until(() => stream.ended, BUDGET_MS);
        assert.equal(other.liveEvents.count(user.userId), 0);
        // And the token is refused on the other instance's /api/auth at once.
        assert.equal((await call(other, user.accessToken, 'GET', '/api/auth/me')).statusCode, 401);
      } finally {
        await other.close();
      }
    });
  }
});
