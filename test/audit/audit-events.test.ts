import type { AuthEvent } from '../../src/audit/audit.service.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import {
  assertProblem,
  bearer,
  cookieValue,
  decodeJwt,
  getCsrf,
  newAdminSession,
  postRefresh,
  REFRESH,
  refreshSession,
} from '../helpers/auth.js';
import {
  forEachDatabase,
  GOOD_PASSWORD,
  login,
  signup,
  testHasher,
  uniqueName,
  type Session,
} from '../helpers/harness.js';
import { captureLogs } from '../helpers/logs.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NEW_PASSWORD = 'amber-Orchard-compass-77-softly';
const KINDS =
  'signup, admin_create, login, refresh, refresh_reuse, password_change, password_reset, logout, account_delete, ' +
  'admin_list_users, admin_view_user, admin_delete_user, session_revoke, mfa_enrol, mfa_remove, recovery_codes, admin_remove_mfa, token_create, token_revoke, ' +
  'admin_invite, admin_invite_revoke, admin_create_user, admin_update_user, admin_setup_link, account_setup, email_change, password_reset_request';

type Event = AuthEvent;

/** The parts of an event a test can predict; id and created_at are checked for form and order. */
const stripped = (events: Event[]) => events.map(({ id: _id, created_at: _at, ...rest }) => rest);

function assertWellFormed(events: Event[]): void {
  for (const event of events) {
    assert.deepEqual(Object.keys(event), [
      'id',
      'user_id',
      'username',
      'kind',
      'outcome',
      'ip_address',
      'user_agent',
      'detail',
      'created_at',
    ]);
    assert.match(event.id, UUID);
    assert.match(event.created_at, TIMESTAMP);
  }
  for (let i = 1; i < events.length; i++) assert.ok(events[i - 1]!.created_at >= events[i]!.created_at, 'newest first');
}

forEachDatabase(
  'GET /auth/admin/events: the audit trail',
  (ctx) => {
    let admin: Session;
    const events = async (query = '') => {
      admin ??= await newAdminSession(ctx);
      const res = await ctx.app.inject({
        method: 'GET',
        url: `/api/auth/admin/events${query}`,
        headers: bearer(admin.accessToken),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json() as Event[];
      assertWellFormed(body);
      return body;
    };
    /** A request from a client of its own (address and User-Agent), as the trail records it. */
    const client = { remoteAddress: '203.0.113.7', headers: { 'user-agent': 'script/1.0' } };
    const inject = (
      method: 'GET' | 'POST' | 'PUT' | 'DELETE',
      url: string,
      options: { token?: string; payload?: object } = {},
    ) =>
      ctx.app.inject({
        method,
        url,
        remoteAddress: client.remoteAddress,
        payload: options.payload,
        headers: { ...client.headers, ...(options.token === undefined ? {} : bearer(options.token)) },
      });

    test('a scripted account life, event by event, newest first', async () => {
      const username = uniqueName('audit');
      const created = await inject('POST', '/api/auth/signup', { payload: { username, password: GOOD_PASSWORD } });
      assert.equal(created.statusCode, 201);
      const userId = created.json().id as string;
      assertProblem(
        await inject('POST', '/api/auth/login', { payload: { username, password: `${GOOD_PASSWORD}x` } }),
        401,
        'Invalid credentials',
      );
      const loggedIn = await inject('POST', '/api/auth/login', { payload: { username, password: GOOD_PASSWORD } });
      const token0 = cookieValue(loggedIn, REFRESH)!;
      const session1 = decodeJwt(token0).payload.jti as string;
      const access = loggedIn.json().access_token as string;
      const refreshed = await postRefresh(ctx.app, token0, await getCsrf(ctx.app, token0), client.headers);
      assert.equal(refreshed.statusCode, 200);
      const token1 = cookieValue(refreshed, REFRESH)!;

      const owner = (payload: object) => inject('PUT', '/api/auth/owner/', { token: access, payload });
      assertProblem(
        await owner({ old_password: 'not-my-password-at-all', new_password: NEW_PASSWORD }),
        401,
        'Invalid credentials',
      );
      assert.equal((await owner({ old_password: GOOD_PASSWORD, new_password: 'short' })).statusCode, 400);
      const changed = await owner({ old_password: GOOD_PASSWORD, new_password: NEW_PASSWORD });
      assert.equal(changed.statusCode, 200);
      const session2 = decodeJwt(cookieValue(changed, REFRESH)!).payload.jti as string;

      // Each step that ends the caller's session ends its access token on /api/auth: the next logs in.
      const signIn = async () => {
        const res = await inject('POST', '/api/auth/login', { payload: { username, password: NEW_PASSWORD } });
        assert.equal(res.statusCode, 200, res.body);
        return {
          access: res.json().access_token as string,
          session: decodeJwt(cookieValue(res, REFRESH)!).payload.jti as string,
        };
      };
      assert.equal(
        (
          await inject('DELETE', `/api/auth/sessions/${session2}`, {
            token: changed.json().access_token as string,
            payload: { password: NEW_PASSWORD },
          })
        ).statusCode,
        204,
      );
      const third = await signIn();
      const unknown = '00000000-0000-4000-8000-000000000000';
      assertProblem(
        await inject('DELETE', `/api/auth/sessions/${unknown}`, {
          token: third.access,
          payload: { password: NEW_PASSWORD },
        }),
        404,
        'Session not found',
      );
      assert.equal((await inject('POST', '/api/auth/logout', { token: third.access })).statusCode, 204);
      // The rotated token comes back (theft), then a token that was merely revoked (by the password change).
      assertProblem(await refreshSession(ctx.app, token0), 401, 'Invalid refresh token');
      assertProblem(await refreshSession(ctx.app, token1), 401, 'Invalid refresh token');
      const fourth = await signIn();
      const remove = (password: string) =>
        inject('DELETE', '/api/auth/owner', { token: fourth.access, payload: { password } });
      assertProblem(await remove(GOOD_PASSWORD), 401, 'Invalid credentials');
      assert.equal((await remove(NEW_PASSWORD)).statusCode, 204);

      const ip = client.remoteAddress;
      const ua = 'script/1.0';
      const local = { ip_address: '127.0.0.1', user_agent: 'lightMyRequest' };
      const base = { user_id: userId, ip_address: ip, user_agent: ua };
      // The account is gone; its trail is not.
      assert.deepEqual(stripped(await events(`?user_id=${userId}`)), [
        { ...base, username, kind: 'account_delete', outcome: 'success', detail: null },
        { ...base, username, kind: 'account_delete', outcome: 'failure', detail: 'wrong password' },
        { ...base, username, kind: 'login', outcome: 'success', detail: `session ${fourth.session}` },
        { ...base, ...local, username, kind: 'refresh', outcome: 'failure', detail: 'revoked token' },
        {
          ...base,
          ...local,
          username,
          kind: 'refresh_reuse',
          outcome: 'failure',
          detail: `a rotated token of session ${session1} was presented again; 0 active tokens revoked`,
        },
        { ...base, username, kind: 'logout', outcome: 'success', detail: 'all sessions revoked' },
        { ...base, username, kind: 'session_revoke', outcome: 'failure', detail: `session ${unknown} not found` },
        { ...base, username, kind: 'login', outcome: 'success', detail: `session ${third.session}` },
        { ...base, username, kind: 'session_revoke', outcome: 'success', detail: `session ${session2}` },
        {
          ...base,
          username,
          kind: 'password_change',
          outcome: 'success',
          detail: `other sessions revoked; new session ${session2}`,
        },
        { ...base, username, kind: 'password_change', outcome: 'failure', detail: 'new password rejected' },
        { ...base, username, kind: 'password_change', outcome: 'failure', detail: 'wrong old password' },
        {
          ...base,
          ip_address: '127.0.0.1',
          username,
          kind: 'refresh',
          outcome: 'success',
          detail: `session ${session1}`,
        },
        { ...base, username, kind: 'login', outcome: 'success', detail: `session ${session1}` },
        { ...base, username, kind: 'login', outcome: 'failure', detail: 'wrong password' },
        { ...base, username, kind: 'signup', outcome: 'success', detail: null },
      ]);
    });

    test('theft detection is recorded with the number of tokens it revoked', async () => {
      const s = await login(ctx.app, (await signup(ctx.app)).username);
      const rotated = await refreshSession(ctx.app, s.refreshToken);
      assert.equal(rotated.statusCode, 200);
      assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
      const session = decodeJwt(s.refreshToken).payload.jti as string;
      const [latest] = await events('?kind=refresh_reuse&limit=1');
      assert.deepEqual(stripped([latest!]), [
        {
          user_id: s.userId,
          username: s.username,
          kind: 'refresh_reuse',
          outcome: 'failure',
          ip_address: '127.0.0.1',
          user_agent: 'lightMyRequest',
          detail: `a rotated token of session ${session} was presented again; 1 active tokens revoked`,
        },
      ]);
    });

    test('failed logins: unknown users keep the name tried, unless it cannot be a username', async () => {
      const name = uniqueName('ghost');
      const post = (username: string, password = GOOD_PASSWORD) =>
        ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
      assertProblem(await post(name.toUpperCase()), 401, 'Invalid credentials');
      // A password typed into the username field must not end up in the trail.
      assertProblem(await post('Pa$$ word typed here!'), 401, 'Invalid credentials');
      assertProblem(await post(name, 'x'.repeat(257)), 401, 'Invalid credentials');
      const failure = {
        user_id: null,
        kind: 'login',
        outcome: 'failure',
        ip_address: '127.0.0.1',
        user_agent: 'lightMyRequest',
      };
      assert.deepEqual(stripped(await events('?kind=login&limit=3')), [
        { ...failure, username: name, detail: 'password too long' },
        { ...failure, username: null, detail: 'unknown user' },
        { ...failure, username: name, detail: 'unknown user' },
      ]);
    });

    test('signup of a taken name is a failure event', async () => {
      const { username } = await signup(ctx.app);
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/signup',
        payload: { username, password: GOOD_PASSWORD },
      });
      assertProblem(res, 409, 'Username is already in use');
      assert.deepEqual(stripped(await events('?kind=signup&limit=1')), [
        {
          user_id: null,
          username,
          kind: 'signup',
          outcome: 'failure',
          ip_address: '127.0.0.1',
          user_agent: 'lightMyRequest',
          detail: 'username taken',
        },
      ]);
    });

    test('admin actions are recorded under the administrator, naming the user acted on', async () => {
      const boss = await newAdminSession(ctx);
      const target = await signup(ctx.app);
      const missing = '00000000-0000-4000-8000-00000000abcd';
      const as = (method: 'GET' | 'DELETE', url: string) =>
        ctx.app.inject({ method, url, headers: bearer(boss.accessToken) });
      assert.equal((await as('GET', '/api/auth/admin/all?limit=2&offset=1')).statusCode, 200);
      assert.equal((await as('DELETE', `/api/auth/admin/${target.id}`)).statusCode, 204);
      assertProblem(await as('DELETE', `/api/auth/admin/${missing}`), 404, 'User not found');
      const local = { user_id: boss.userId, ip_address: '127.0.0.1', user_agent: 'lightMyRequest' };
      assert.deepEqual(stripped(await events(`?user_id=${boss.userId}`)), [
        {
          ...local,
          username: boss.username,
          kind: 'admin_delete_user',
          outcome: 'failure',
          detail: `user ${missing} not found`,
        },
        {
          ...local,
          username: boss.username,
          kind: 'admin_delete_user',
          outcome: 'success',
          detail: `user ${target.id}`,
        },
        { ...local, username: boss.username, kind: 'admin_list_users', outcome: 'success', detail: 'limit 2 offset 1' },
        {
          ...local,
          username: boss.username,
          kind: 'login',
          outcome: 'success',
          detail: `session ${decodeJwt(boss.refreshToken).payload.jti}`,
        },
        { ...local, username: boss.username, kind: 'signup', outcome: 'success', detail: null },
      ]);
      // The deleted user's own history stays, and the filter is case-insensitive.
      assert.deepEqual(
        (await events(`?user_id=${target.id.toUpperCase()}`)).map((e) => e.kind),
        ['signup'],
      );
    });

    test('pagination: limit/offset over the filtered trail; an empty page is []', async () => {
      const s = await login(ctx.app, (await signup(ctx.app)).username);
      for (let i = 0; i < 3; i++) {
        const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/admin/all', headers: bearer(s.accessToken) });
        assertProblem(res, 403, 'Forbidden'); // refused before the handler: not an event
      }
      await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(s.accessToken) });
      const all = await events(`?user_id=${s.userId}`);
      assert.deepEqual(
        all.map((e) => e.kind),
        ['logout', 'login', 'signup'],
      );
      assert.deepEqual(await events(`?user_id=${s.userId}&limit=1&offset=1`), all.slice(1, 2));
      assert.deepEqual(await events(`?user_id=${s.userId}&offset=2`), all.slice(2));
      assert.deepEqual(await events(`?user_id=${s.userId}&kind=login`), all.slice(1, 2));
      for (const query of [
        `?user_id=${s.userId}&offset=3`,
        '?offset=100000',
        '?user_id=00000000-0000-4000-8000-000000000000',
        `?user_id=${s.userId}&kind=session_revoke`,
      ]) {
        const res = await ctx.app.inject({
          method: 'GET',
          url: `/api/auth/admin/events${query}`,
          headers: bearer(admin.accessToken),
        });
        assert.equal(res.statusCode, 200);
        assert.equal(res.body, '[]', query);
      }
    });

    test('pagination: default 50, at most 100, stable pages newest first', async () => {
      // 105 events of one (made-up) user, written directly: producing them through the API would
      // only slow the test down.
      const userId = randomUUID();
      const rows = Array.from({ length: 105 }, (_, i) => ({
        id: randomUUID(),
        user_id: userId,
        username: null,
        kind: 'logout',
        outcome: 'success' as const,
        ip_address: null,
        user_agent: null,
        detail: `#${i}`,
        created_at: new Date(Date.UTC(2030, 0, 1)).toISOString(),
      }));
      for (const row of rows) await ctx.database.db.insertInto('auth_events').values(row).execute();
      // All in the same millisecond: insertion order still decides.
      const expected = rows.map((r) => r.detail).reverse();
      const page = async (query: string) => (await events(`?user_id=${userId}${query}`)).map((e) => e.detail);
      assert.deepEqual(await page(''), expected.slice(0, 50));
      assert.deepEqual(await page('&limit=100'), expected.slice(0, 100));
      assert.deepEqual(await page('&limit=10&offset=100'), expected.slice(100));
      const stitched = [
        ...(await page('&limit=40')),
        ...(await page('&limit=40&offset=40')),
        ...(await page('&limit=40&offset=80')),
      ];
      assert.deepEqual(stitched, expected);
    });

    test('bad query parameters: 400 naming the parameter', async () => {
      admin ??= await newAdminSession(ctx);
      const get = (query: string) =>
        ctx.app.inject({ method: 'GET', url: `/api/auth/admin/events${query}`, headers: bearer(admin.accessToken) });
      const cases: Array<[string, string]> = [
        ['?limit=0', 'Query parameter "limit" must be an integer from 1 to 100'],
        ['?limit=101', 'Query parameter "limit" must be an integer from 1 to 100'],
        ['?limit=x', 'Query parameter "limit" must be an integer from 1 to 100'],
        ['?offset=-1', 'Query parameter "offset" must be an integer 0 or more'],
        ['?user_id=nope', 'Query parameter "user_id" must be a UUID'],
        ['?user_id=', 'Query parameter "user_id" must be a UUID'],
        ['?kind=LOGIN', `Query parameter "kind" must be one of ${KINDS}`],
        ['?kind=', `Query parameter "kind" must be one of ${KINDS}`],
        ['?kind=login&kind=logout', 'Query parameter "kind" must be given once'],
        ['?user_id=a&user_id=b', 'Query parameter "user_id" must be given once'],
      ];
      for (const [query, detail] of cases) assertProblem(await get(query), 400, detail);
    });

    test('only administrators: 401 without a token, 403 for a user', async () => {
      const s = await login(ctx.app, (await signup(ctx.app)).username);
      assertProblem(await ctx.app.inject({ method: 'GET', url: '/api/auth/admin/events' }), 401, 'Unauthorized');
      assertProblem(
        await ctx.app.inject({ method: 'GET', url: '/api/auth/admin/events', headers: bearer(s.accessToken) }),
        403,
        'Forbidden',
      );
    });
  },
  { REFRESH_REUSE_GRACE_SECONDS: '0' },
); // theft detected at once here; the grace is tested in revocation-race.test.ts

forEachDatabase('audit trail: a failure to record never fails the request', (ctx) => {
  test('with the table gone, signup, login and logout still succeed, and the failure is logged', async () => {
    const logs = captureLogs('error');
    const app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: logs.logger,
      hasher: testHasher(ctx.config.argon2Cost),
    });
    await sql`alter table auth_events rename to auth_events_away`.execute(ctx.database.db);
    try {
      const s = await login(app, (await signup(app)).username);
      const out = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: s.auth });
      assert.equal(out.statusCode, 204);
    } finally {
      await sql`alter table auth_events_away rename to auth_events`.execute(ctx.database.db);
      await app.close();
    }
    const failures = logs.lines
      .map((line) => JSON.parse(line))
      .filter((l) => l.msg === 'recording an auth event failed');
    assert.deepEqual(
      failures.map((l) => [l.level, l.kind, l.outcome]),
      [
        [50, 'signup', 'success'],
        [50, 'login', 'success'],
        [50, 'logout', 'success'],
      ],
    );
  });
});
