import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { bearer, REFRESH, refreshSession } from '../helpers/auth.js';
import { listen, Stream } from '../helpers/event-stream.js';
import {
  buildTestApp,
  cookie,
  forEachDatabase,
  GOOD_PASSWORD,
  login,
  newSession,
  type Session,
} from '../helpers/harness.js';
import { uploadRaw } from '../attachments/support.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';
import { adminSession, auditEvents } from './support.js';

/** A stream ends within this (CONTRACT.md part 3: "within 5 seconds"); a bound on a condition, not a delay. */
const BUDGET_MS = 5000;

forEachDatabase('administration: disable, administrators, quota, rows', (ctx) => {
  let app: FastifyInstance;
  let base = '';
  const streams: Stream[] = [];
  before(async () => {
    // A listening instance for the event stream; the periodic re-check far off, so the end is the signal's.
    app = await buildTestApp(ctx.config, ctx.database, { liveTesting: { recheckMs: 600_000 } });
    base = await listen(app);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await app.close();
  });
  const patch = (admin: Session, id: string, payload: object) =>
    app.inject({ method: 'PATCH', url: `/api/auth/admin/${id}`, headers: bearer(admin.accessToken), payload });
  const basic = (username: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${username}:${secret}`).toString('base64')}`,
  });
  const newToken = async (user: Session, scopes: string[]) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: user.auth,
      payload: { name: `t${scopes.join()}`, scopes, password: GOOD_PASSWORD },
    });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { token: string }).token;
  };

  test('disabling ends everything at once: login (401 like a wrong password), refresh, /api/auth, personal tokens, WebDAV, event streams; enabling lets it back in', async () => {
    const admin = await adminSession({ ...ctx, app });
    const user = await newSession(app, 'dis');
    const pat = await newToken(user, ['notes:read']);
    const davToken = await newToken(user, ['dav']);
    const stream = await Stream.open(base, user.accessToken);
    streams.push(stream);
    const patStream = await Stream.open(base, pat);
    streams.push(patStream);
    assert.equal(stream.status, 200);
    assert.equal(patStream.status, 200);
    const propfind = (headers: Record<string, string>) =>
      app.inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0', ...headers } });
    assert.equal((await propfind(basic(user.username, davToken))).statusCode, 207);
    assert.equal((await app.inject({ url: '/api/notes', headers: bearer(pat) })).statusCode, 200);

    const res = await patch(admin, user.userId, { disabled: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().disabled, true);
    assert.equal(res.json().id, user.userId);

    await stream.until(() => stream.ended, BUDGET_MS);
    await patStream.until(() => patStream.ended, BUDGET_MS);
    const wrong = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: user.username, password: 'not-the-password-at-all' },
    });
    const refused = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: user.username, password: GOOD_PASSWORD },
    });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json(), wrong.json(), 'the same answer as a wrong password');
    assert.equal((await refreshSession(app, user.refreshToken)).statusCode, 401);
    assert.equal((await app.inject({ url: '/api/auth/me', headers: user.auth })).statusCode, 401);
    assert.equal((await app.inject({ url: '/api/notes', headers: bearer(pat) })).statusCode, 401);
    assert.equal((await propfind(basic(user.username, davToken))).statusCode, 401);
    assert.equal((await propfind(user.auth)).statusCode, 401, 'WebDAV with the access token too');
    assert.equal((await Stream.open(base, pat)).status, 401);

    const enabled = await patch(admin, user.userId, { disabled: false });
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal(enabled.json().disabled, false);
    const again = await login(app, user.username);
    assert.equal((await app.inject({ url: '/api/notes', headers: again.auth })).statusCode, 200);
    assert.equal((await app.inject({ url: '/api/notes', headers: bearer(pat) })).statusCode, 200);

    const events = await auditEvents(app, admin.accessToken, 'admin_update_user');
    assert.ok(
      events.some(
        (e) => e.user_id === admin.userId && e.detail === `user ${user.userId}: disabled; every session ended`,
      ),
    );
    assert.ok(events.some((e) => e.detail === `user ${user.userId}: enabled`));
  });

  test('the last enabled administrator cannot be demoted or disabled (409); with another one they can', async () => {
    await ctx.database.db.updateTable('users').set({ is_admin: false }).execute();
    const admin = await adminSession({ ...ctx, app });
    for (const body of [{ is_admin: false }, { disabled: true }, { is_admin: false, disabled: true }]) {
      const res = await patch(admin, admin.userId, body);
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().code, 'last_administrator');
    }
    // A disabled administrator does not count as one left.
    const other = await adminSession({ ...ctx, app });
    assert.equal((await patch(admin, other.userId, { disabled: true })).statusCode, 200);
    assert.equal((await patch(admin, admin.userId, { is_admin: false })).statusCode, 409);
    assert.equal((await patch(admin, other.userId, { disabled: false })).statusCode, 200);
    const demoted = await patch(admin, admin.userId, { is_admin: false });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal(demoted.json().is_admin, false);
    // No longer an administrator: the admin routes refuse it at once.
    assert.equal((await patch(admin, other.userId, { is_admin: true })).statusCode, 403);
    // Disabling ended the other's sessions; it signs in again.
    const otherAgain = await login(app, other.username);
    const failures = await auditEvents(app, otherAgain.accessToken, 'admin_update_user');
    assert.ok(failures.some((e) => e.outcome === 'failure' && e.detail?.endsWith('the last administrator')));
  });

  test('a quota of its own: uploads past it are 413 quota_exceeded; null is the default again', async () => {
    const admin = await adminSession({ ...ctx, app });
    const user = await newSession(app, 'quota');
    assert.equal((await patch(admin, user.userId, { storage_quota_bytes: 10 })).json().storage_quota_bytes, 10);
    const usage = await app.inject({ url: '/api/attachments/usage', headers: user.auth });
    assert.equal(usage.json().quota_bytes, 10, usage.body);
    const over = await uploadRaw(app, user, Buffer.alloc(20, 1));
    assert.equal(over.statusCode, 413, over.body);
    assert.equal(over.json().code, 'quota_exceeded');
    assert.equal((await uploadRaw(app, user, Buffer.alloc(8, 2))).statusCode, 201);
    const reset = await patch(admin, user.userId, { storage_quota_bytes: null });
    assert.equal(reset.json().storage_quota_bytes, null);
    assert.equal((await uploadRaw(app, user, Buffer.alloc(20, 3))).statusCode, 201);
    const unknown = await patch(admin, '00000000-0000-4000-8000-000000000000', { disabled: true });
    assert.equal(unknown.statusCode, 404);
    assert.equal((await patch(admin, user.userId, { storage_quota_bytes: -1 })).statusCode, 400);
    assert.equal((await patch(admin, user.userId, { surprise: true })).statusCode, 400);
  });

  test('admin rows: e-mail, disabled, second factors, last login and storage used', async () => {
    const admin = await adminSession({ ...ctx, app });
    const user = await newSession(app, 'rows');
    assert.equal((await uploadRaw(app, user, Buffer.alloc(5, 9))).statusCode, 201);
    const list = await app.inject({ url: '/api/auth/admin/all?limit=100', headers: bearer(admin.accessToken) });
    assert.equal(list.statusCode, 200, list.body);
    const row = (list.json() as Array<Record<string, unknown>>).find((u) => u.id === user.userId)!;
    assert.equal(row.email, null);
    assert.equal(row.disabled, false);
    assert.deepEqual(row.mfa, { totp: false, passkeys: 0 });
    assert.equal(typeof row.last_login_at, 'string');
    assert.equal(row.storage_used_bytes, 5);
    assert.equal(row.storage_quota_bytes, null);
  });

  test('an account an administrator creates: a set-up link, single use, where the person chooses a password', async () => {
    const admin = await adminSession({ ...ctx, app });
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/admin/users',
      headers: bearer(admin.accessToken),
      payload: { username: 'Made_By_Admin', admin: false },
    });
    assert.equal(res.statusCode, 201, res.body);
    const { user, setup_url } = res.json() as { user: Record<string, unknown>; setup_url: string };
    assert.equal(user.username, 'made_by_admin');
    assert.equal(user.is_admin, false);
    assert.equal(user.disabled, false);
    const url = new URL(setup_url);
    assert.equal(`${url.origin}${url.pathname}`, `${ctx.config.publicUrl}/setup`);
    const token = url.searchParams.get('token')!;
    // No password yet: nothing logs in.
    const noLogin = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'made_by_admin', password: '' },
    });
    assert.equal(noLogin.statusCode, 401);
    const taken = await app.inject({
      method: 'POST',
      url: '/api/auth/admin/users',
      headers: bearer(admin.accessToken),
      payload: { username: 'made_by_admin' },
    });
    assert.equal(taken.statusCode, 409);
    // A new link replaces the first.
    const relink = await app.inject({
      method: 'POST',
      url: `/api/auth/admin/${user.id}/setup-link`,
      headers: bearer(admin.accessToken),
    });
    assert.equal(relink.statusCode, 201, relink.body);
    const token2 = new URL(relink.json().setup_url).searchParams.get('token')!;
    const setup = (t: string, password = GOOD_PASSWORD) =>
      app.inject({ method: 'POST', url: '/api/auth/setup', payload: { token: t, password } });
    assert.equal((await setup(token)).json().code, 'setup_link_invalid');
    assert.equal((await setup(token2, 'short')).statusCode, 400);
    const done = await setup(token2);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().user.id, user.id);
    assert.ok(cookie(done, REFRESH)?.value, 'signed in: the refresh cookie');
    assert.equal(
      (await app.inject({ url: '/api/auth/me', headers: bearer(done.json().access_token) })).statusCode,
      200,
    );
    const reused = await setup(token2);
    assert.equal(reused.statusCode, 400);
    assert.equal(reused.json().code, 'setup_link_invalid');
    await login(app, 'made_by_admin');
    const hasPassword = await app.inject({
      method: 'POST',
      url: `/api/auth/admin/${user.id}/setup-link`,
      headers: bearer(admin.accessToken),
    });
    assert.equal(hasPassword.statusCode, 409);
    const created = await auditEvents(app, admin.accessToken, 'admin_create_user');
    assert.ok(created.some((e) => e.outcome === 'success' && e.detail?.startsWith(`user ${user.id} (made_by_admin)`)));
    assert.ok((await auditEvents(app, admin.accessToken, 'admin_setup_link')).some((e) => e.outcome === 'success'));
    assert.ok((await auditEvents(app, admin.accessToken, 'account_setup')).some((e) => e.outcome === 'success'));
  });
});

forEachDatabase('administration races', (ctx) => {
  const raced = racedApp(ctx);

  test('two administrators demoting each other at once: one 200, the other refused (409, or 403 once demoted), one administrator left', async () => {
    await ctx.database.db.updateTable('users').set({ is_admin: false }).execute();
    const a = await adminSession(ctx);
    const b = await adminSession(ctx);
    // a's demotion of b holds both rows' locks; b's demotion of a, past the admin check, waits for them.
    const gate = raced.pause.arm('admin-update:locked');
    const first = raced.app.inject({
      method: 'PATCH',
      url: `/api/auth/admin/${b.userId}`,
      headers: bearer(a.accessToken),
      payload: { is_admin: false },
    });
    await gate.reached;
    const second = ctx.app.inject({
      method: 'PATCH',
      url: `/api/auth/admin/${a.userId}`,
      headers: bearer(b.accessToken),
      payload: { is_admin: false },
    });
    const queued = await queuedBehindLock(ctx, second);
    gate.release();
    const [won, lost] = await Promise.all([first, second]);
    assert.equal(queued, true, 'the second waits for the first');
    assert.equal(won.statusCode, 200, won.body);
    // PostgreSQL: b passed the admin check before a's change committed, then found a the last one
    // (409). SQLite: the held transaction owns the only connection, so b's admin check itself waits
    // and finds b demoted (403). Refused either way.
    if (ctx.kind === 'postgres') assert.deepEqual([lost.statusCode, lost.json().code], [409, 'last_administrator']);
    else assert.deepEqual([lost.statusCode, lost.json().code], [403, 'forbidden']);
    const admins = await ctx.database.db.selectFrom('users').select('id').where('is_admin', '=', true).execute();
    assert.deepEqual(admins, [{ id: a.userId }]);
  });
});
