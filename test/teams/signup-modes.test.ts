import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { assertProblem, bearer } from '../helpers/auth.js';
import { forEachDatabase, login, newSession, type Session } from '../helpers/harness.js';
import { racedApp } from '../helpers/pause.js';
import { adminSession, assertRefused, auditEvents, invite, signupWith } from './support.js';

/** SIGNUP × invitation (CONTRACT.md, "Teams"): what each mode answers with none, a valid one and a spent one. */
forEachDatabase('sign-up modes and invitations', (ctx) => {
  let admin: Session;

  test('GET /auth/config is public and says the defaults', async () => {
    const res = await ctx.app.inject({ url: '/api/auth/config' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { signup: 'open', password_login: true, oidc: null, passkeys: true });
  });

  for (const mode of ['open', 'invite', 'closed'] as const) {
    test(`SIGNUP=${mode}: without an invitation, with a valid one, with a used, revoked or expired one`, async () => {
      await ctx.rebuild({ SIGNUP: mode });
      admin = await adminSession(ctx);
      const config = await ctx.app.inject({ url: '/api/auth/config' });
      assert.equal(config.json().signup, mode);
      const refusal = mode === 'closed' ? 'signup_closed' : 'invitation_required';

      const none = await signupWith(ctx.app);
      if (mode === 'open') assert.equal(none.statusCode, 201, none.body);
      else assertRefused(none, refusal);

      const valid = await invite(ctx.app, admin.accessToken);
      const created = await signupWith(ctx.app, valid.token);
      assert.equal(created.statusCode, 201, created.body);
      // Single use, in every mode.
      assertRefused(await signupWith(ctx.app, valid.token), refusal);

      const revoked = await invite(ctx.app, admin.accessToken);
      const del = await ctx.app.inject({
        method: 'DELETE',
        url: `/api/auth/admin/invitations/${revoked.id}`,
        headers: bearer(admin.accessToken),
      });
      assert.equal(del.statusCode, 204, del.body);
      assertRefused(await signupWith(ctx.app, revoked.token), refusal);

      const expired = await invite(ctx.app, admin.accessToken);
      await ctx.database.db
        .updateTable('invitations')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', expired.id)
        .execute();
      assertRefused(await signupWith(ctx.app, expired.token), refusal);
      assertRefused(await signupWith(ctx.app, 'no-such-invitation'), refusal);
    });
  }

  test('an invitation with admin: true makes an administrator; one without does not', async () => {
    await ctx.rebuild({ SIGNUP: 'invite' });
    admin = await adminSession(ctx);
    for (const asAdmin of [true, false]) {
      const inv = await invite(ctx.app, admin.accessToken, { admin: asAdmin });
      const res = await signupWith(ctx.app, inv.token);
      assert.equal(res.statusCode, 201, res.body);
      const session = await login(ctx.app, res.json().username);
      const me = await ctx.app.inject({ url: '/api/auth/me', headers: session.auth });
      assert.equal(me.json().is_admin, asAdmin);
    }
  });

  test('an invitation address with a space, a control character or an unpaired surrogate is 400 naming the rule', async () => {
    admin = await adminSession(ctx);
    for (const email of ['a@b\u0000c', 'a b@example.com', 'a@exam\nple.com', 'a\u0085@example.com', 'a@\ud800.com']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/auth/admin/invitations',
        headers: bearer(admin.accessToken),
        payload: { email },
      });
      assertProblem(res, 400, 'Email must be an e-mail address: one @, no spaces or control characters');
    }
    assert.equal((await invite(ctx.app, admin.accessToken, { email: 'zoë@exämple.com' })).email, 'zoë@exämple.com');
  });

  test('an administrator demoted, disabled or deleted: their open invitations stop working, the others do not', async () => {
    await ctx.rebuild({ SIGNUP: 'invite' });
    admin = await adminSession(ctx);
    const kept = await invite(ctx.app, admin.accessToken, { admin: true });
    const changes: Array<[string, (id: string) => Promise<number>]> = [
      ['demoted', (id) => patchUser(id, { is_admin: false })],
      ['disabled', (id) => patchUser(id, { disabled: true })],
      ['deleted', async (id) => (await adminRequest('DELETE', id)).statusCode],
    ];
    for (const [change, apply] of changes) {
      const other = await adminSession(ctx);
      const open = await invite(ctx.app, other.accessToken, { admin: true, expires_in_days: 365 });
      const used = await invite(ctx.app, other.accessToken);
      const member = await signupWith(ctx.app, used.token);
      assert.equal(member.statusCode, 201, member.body);
      assert.equal(await apply(other.userId), change === 'deleted' ? 204 : 200, change);
      // The link they kept lets nobody in, as an administrator or at all.
      assertRefused(await signupWith(ctx.app, open.token), 'invitation_required');
      const listed = await ctx.app.inject({ url: '/api/auth/admin/invitations', headers: bearer(admin.accessToken) });
      const ids = (listed.json() as Array<{ id: string }>).map((i) => i.id);
      assert.ok(!ids.includes(open.id) && ids.includes(kept.id), `${change}: only the other administrator's is open`);
      // Who came in by a used one is still there, and its record too.
      const record = await ctx.database.db
        .selectFrom('invitations')
        .select('used_by')
        .where('id', '=', used.id)
        .executeTakeFirst();
      assert.equal(record?.used_by, member.json().id, change);
    }
    // The disabling (the newest change of an administrator) says so.
    const [disabled] = await auditEvents(ctx.app, admin.accessToken, 'admin_update_user');
    assert.match(disabled!.detail ?? '', /: disabled; every session ended; 1 open invitation of theirs revoked$/);
    // Who acted is named, not only by id (the trail's screen showed "—" for every administrator's action).
    assert.deepEqual(
      [disabled!.user_id, (disabled as { username?: string | null }).username],
      [admin.userId, admin.username],
    );
    assert.equal((await signupWith(ctx.app, kept.token)).statusCode, 201, 'the other invitation still works');

    async function adminRequest(method: 'PATCH' | 'DELETE', id: string, payload?: object) {
      return ctx.app.inject({
        method,
        url: `/api/auth/admin/${id}`,
        headers: bearer(admin.accessToken),
        ...(payload === undefined ? {} : { payload }),
      });
    }
    async function patchUser(id: string, payload: object) {
      const res = await adminRequest('PATCH', id, payload);
      assert.equal(res.statusCode, 200, res.body);
      return res.statusCode;
    }
  });

  test('invitations: the token once, only its hash stored, listed while open, revoked once, administrators only, audited', async () => {
    await ctx.rebuild({ SIGNUP: 'invite', PUBLIC_URL: 'https://notes.example.com' });
    admin = await adminSession(ctx);
    const before = Date.now();
    const inv = await invite(ctx.app, admin.accessToken, { email: 'sam@example.com', admin: true, expires_in_days: 3 });
    assert.equal(inv.url, `https://notes.example.com/signup?invitation=${inv.token}`);
    assert.equal(inv.email, 'sam@example.com');
    assert.equal(inv.admin, true);
    const days = (Date.parse(inv.expires_at) - before) / 86_400_000;
    assert.ok(days > 2.99 && days < 3.01, `expires in ${days} days`);
    const defaulted = await invite(ctx.app, admin.accessToken);
    const defaultDays = (Date.parse(defaulted.expires_at) - before) / 86_400_000;
    assert.ok(defaultDays > 6.99 && defaultDays < 7.01, `default ${defaultDays} days`);

    const stored = await ctx.database.db
      .selectFrom('invitations')
      .selectAll()
      .where('id', '=', inv.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.token_hash, createHash('sha256').update(inv.token).digest('hex'));
    assert.ok(!JSON.stringify(stored).includes(inv.token), 'the token itself is not stored');

    const listed = await ctx.app.inject({ url: '/api/auth/admin/invitations', headers: bearer(admin.accessToken) });
    assert.equal(listed.statusCode, 200, listed.body);
    const ids = (listed.json() as Array<Record<string, unknown>>).map((i) => i.id);
    assert.ok(ids.includes(inv.id) && ids.includes(defaulted.id));
    assert.ok(!listed.body.includes(inv.token), 'no tokens in the list');
    assert.deepEqual(Object.keys((listed.json() as Array<Record<string, unknown>>)[0]!).sort(), [
      'admin',
      'created_at',
      'email',
      'expires_at',
      'id',
    ]);
    // A used one leaves the list.
    assert.equal((await signupWith(ctx.app, defaulted.token)).statusCode, 201);
    const after = await ctx.app.inject({ url: '/api/auth/admin/invitations', headers: bearer(admin.accessToken) });
    assert.ok(!(after.json() as Array<{ id: string }>).some((i) => i.id === defaulted.id));
    // A used one cannot be revoked; an unknown one neither.
    const usedDelete = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/auth/admin/invitations/${defaulted.id}`,
      headers: bearer(admin.accessToken),
    });
    assert.equal(usedDelete.statusCode, 404);
    assert.equal(usedDelete.json().code, 'invitation_not_found');

    const user = await newSession(ctx.app).catch(() => undefined);
    assert.equal(user, undefined, 'SIGNUP=invite: no account without an invitation');
    const invited = await signupWith(ctx.app, (await invite(ctx.app, admin.accessToken)).token);
    const member = await login(ctx.app, invited.json().username);
    for (const [method, url] of [
      ['POST', '/api/auth/admin/invitations'],
      ['GET', '/api/auth/admin/invitations'],
      ['DELETE', `/api/auth/admin/invitations/${inv.id}`],
    ] as const) {
      const res = await ctx.app.inject({
        method,
        url,
        headers: member.auth,
        ...(method === 'POST' ? { payload: {} } : {}),
      });
      assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
      assert.equal((await ctx.app.inject({ method, url })).statusCode, 401);
    }
    const del = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/auth/admin/invitations/${inv.id}`,
      headers: bearer(admin.accessToken),
    });
    assert.equal(del.statusCode, 204);

    const created = await auditEvents(ctx.app, admin.accessToken, 'admin_invite');
    assert.ok(created.some((e) => e.outcome === 'success' && e.user_id === admin.userId && e.detail?.includes(inv.id)));
    const revoked = await auditEvents(ctx.app, admin.accessToken, 'admin_invite_revoke');
    assert.ok(revoked.some((e) => e.outcome === 'success' && e.detail === `invitation ${inv.id}`));
    assert.ok(revoked.some((e) => e.outcome === 'failure' && e.detail?.includes(defaulted.id)));
  });
});

forEachDatabase(
  'an invitation is single use under a race',
  (ctx) => {
    const raced = racedApp(ctx);

    test('two sign-ups with one invitation at once: one account, the other 403, the invitation used by the winner', async () => {
      const admin = await adminSession(ctx);
      const inv = await invite(ctx.app, admin.accessToken);
      // The first has found the invitation usable and waits; the second then takes it.
      const gate = raced.pause.arm('signup:invitation-checked');
      const first = signupWith(raced.app, inv.token, 'racefirst');
      await gate.reached;
      const second = await signupWith(ctx.app, inv.token, 'racesecond');
      assert.equal(second.statusCode, 201, second.body);
      gate.release();
      assertRefused(await first, 'invitation_required');
      const users = await ctx.database.db
        .selectFrom('users')
        .select(['id', 'username'])
        .where('username', 'in', ['racefirst', 'racesecond'])
        .execute();
      assert.deepEqual(
        users.map((u) => u.username),
        ['racesecond'],
      );
      const row = await ctx.database.db
        .selectFrom('invitations')
        .selectAll()
        .where('id', '=', inv.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.used_by, users[0]!.id);
    });
  },
  { SIGNUP: 'invite' },
);
