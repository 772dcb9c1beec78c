import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer } from '../helpers/auth.js';
import { forEachDatabase, login, uniqueName } from '../helpers/harness.js';
import { adminSession, assertRefused, auditEvents, invite, signupWith } from './support.js';

/**
 * PASSWORD_LOGIN=off (CONTRACT.md, "Teams": single sign-on and passkeys are the only ways in,
 * administrators keep their password): an account made with a password could never sign in with
 * it, so sign-up with a password is refused, but for an administrator's invitation.
 */
forEachDatabase(
  'PASSWORD_LOGIN=off: sign-up with a password',
  (ctx) => {
    const exists = async (username: string) =>
      (await ctx.database.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst()) !==
      undefined;

    test('SIGNUP=open: 403 password_login_disabled and no account (the name stays free); audited', async () => {
      const name = uniqueName('pwoff');
      const res = await signupWith(ctx.app, undefined, name);
      assertRefused(res, 'password_login_disabled');
      assert.equal(
        res.json().detail,
        'Signing up with a password is turned off on this server; sign up with single sign-on',
      );
      assert.equal(await exists(name), false);
      const admin = await adminSession(ctx);
      const events = await auditEvents(ctx.app, admin.accessToken, 'signup');
      assert.ok(events.some((e) => e.outcome === 'failure' && e.detail === 'PASSWORD_LOGIN=off'));
    });

    test("a member's invitation is refused and stays open; an administrator's signs up, and its password signs in", async () => {
      const admin = await adminSession(ctx);
      const member = await invite(ctx.app, admin.accessToken);
      const name = uniqueName('pwoffinv');
      assertRefused(await signupWith(ctx.app, member.token, name), 'password_login_disabled');
      assert.equal(await exists(name), false);
      const open = await ctx.app.inject({ url: '/api/auth/admin/invitations', headers: bearer(admin.accessToken) });
      assert.ok(
        (open.json() as Array<{ id: string }>).some((i) => i.id === member.id),
        'the invitation is still open (for single sign-on)',
      );

      const boss = await invite(ctx.app, admin.accessToken, { admin: true });
      const created = await signupWith(ctx.app, boss.token);
      assert.equal(created.statusCode, 201, created.body);
      const session = await login(ctx.app, created.json().username);
      const me = await ctx.app.inject({ url: '/api/auth/me', headers: session.auth });
      assert.equal(me.json().is_admin, true);
    });

    test('SIGNUP=invite and closed say their own refusal first, as they do with passwords on', async () => {
      await ctx.rebuild({ SIGNUP: 'invite' });
      assertRefused(await signupWith(ctx.app), 'invitation_required');
      await ctx.rebuild({ SIGNUP: 'closed' });
      assertRefused(await signupWith(ctx.app), 'signup_closed');
    });
  },
  { PASSWORD_LOGIN: 'off' },
);
