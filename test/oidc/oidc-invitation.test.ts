import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, refreshSession } from '../helpers/auth.js';
import { cookie, forEachDatabase } from '../helpers/harness.js';
import { CLIENT_ID, CLIENT_SECRET, signInAtProvider, startProvider, type TestProvider } from '../helpers/oidc.js';
import { adminSession, auditEvents, invite } from '../teams/support.js';

const PUBLIC_URL = 'http://localhost:8080';
const REDIRECT_URI = `${PUBLIC_URL}/api/auth/oidc/callback`;

/** Each test signs in people of its own: the provider's subjects are made up as the tests go. */
const ACCOUNTS: Record<string, { preferred_username: string }> = {};
let counter = 0;
function person(name: string): string {
  counter += 1;
  const sub = `sub-${name}-${counter}`;
  ACCOUNTS[sub] = { preferred_username: `${name}${counter}` };
  return sub;
}

forEachDatabase(
  'single sign-on under SIGNUP=invite: an invitation carried through the provider',
  (ctx) => {
    let provider: TestProvider;
    before(async () => {
      provider = await startProvider(REDIRECT_URI, ACCOUNTS);
      await ctx.rebuild({
        SIGNUP: 'invite',
        PUBLIC_URL,
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
      });
    });
    after(async () => {
      await provider.close();
    });

    /** The whole flow as a browser goes through it, from GET /oidc/login (with `invitation`, when given). */
    async function signIn(sub: string, invitation?: string, headers: Record<string, string> = {}) {
      const query = invitation === undefined ? '' : `?invitation=${encodeURIComponent(invitation)}`;
      const started = await ctx.app.inject({ method: 'GET', url: `/api/auth/oidc/login${query}` });
      assert.equal(started.statusCode, 302, started.body);
      const pending = cookie(started, 'app.oidc')!.value;
      const back = await signInAtProvider(started.headers.location as string, sub, REDIRECT_URI);
      return ctx.app.inject({
        method: 'GET',
        url: `${back.pathname}${back.search}`,
        cookies: { 'app.oidc': pending },
        headers,
      });
    }

    async function whoAmI(res: LightMyRequestResponse) {
      assert.equal(res.statusCode, 302, res.body);
      assert.equal(res.headers.location, '/');
      const refreshed = await refreshSession(ctx.app, cookie(res, 'app.refresh_token')!.value);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const me = await ctx.app.inject({ url: '/api/auth/me', headers: bearer(refreshed.json().access_token) });
      return me.json() as { id: string; username: string; is_admin: boolean };
    }

    function assertRefusedWith(res: LightMyRequestResponse, code: string, detail: RegExp) {
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(res.json().code, code);
      assert.match(res.json().detail, detail);
      assert.equal(res.headers['set-cookie']?.toString().includes('app.refresh_token'), false, 'no session');
    }

    const openInvitations = async (adminToken: string) => {
      const res = await ctx.app.inject({ url: '/api/auth/admin/invitations', headers: bearer(adminToken) });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as Array<{ id: string }>).map((i) => i.id);
    };

    test('without an invitation, someone the server does not know is refused: 403 invitation_required, no account', async () => {
      const admin = await adminSession(ctx);
      const sub = person('stranger');
      const res = await signIn(sub);
      assertRefusedWith(res, 'invitation_required', /You need an invitation to join this server/);
      const events = await auditEvents(ctx.app, admin.accessToken, 'signup');
      assert.ok(
        events.some((e) => e.outcome === 'failure' && e.detail === 'single sign-on: SIGNUP=invite, no invitation'),
      );
      const users = await ctx.database.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', ACCOUNTS[sub]!.preferred_username)
        .execute();
      assert.deepEqual(users, []);
    });

    test('a browser is sent to the login page, which says why (only the code travels)', async () => {
      const res = await signIn(person('browser'), undefined, { accept: 'text/html,application/xhtml+xml' });
      assert.equal(res.statusCode, 302, res.body);
      assert.equal(res.headers.location, '/login?sso_error=invitation_required');
      assert.equal(res.headers['set-cookie']?.toString().includes('app.refresh_token'), false);
    });

    test('with an invitation: the account is created and the invitation used, once; an administrator invitation makes one', async () => {
      const admin = await adminSession(ctx);
      const invitation = await invite(ctx.app, admin.accessToken, { admin: true });
      const sub = person('invited');
      const me = await whoAmI(await signIn(sub, invitation.token));
      assert.equal(me.username, ACCOUNTS[sub]!.preferred_username);
      assert.equal(me.is_admin, true, 'the invitation said administrator');
      assert.equal((await openInvitations(admin.accessToken)).includes(invitation.id), false, 'used');
      const events = await auditEvents(ctx.app, admin.accessToken, 'signup');
      assert.ok(
        events.some(
          (e) =>
            e.outcome === 'success' &&
            e.user_id === me.id &&
            e.detail?.includes(`invitation ${invitation.id}`) === true,
        ),
      );

      // Used: the next person who comes with it is refused, and gets no account.
      const second = await signIn(person('late'), invitation.token);
      assertRefusedWith(second, 'invitation_required', /unknown, used, revoked or expired/);
      // The invited person signs in again without it: the link to the provider holds.
      assert.equal((await whoAmI(await signIn(sub))).id, me.id);
    });

    test('an unknown or revoked invitation is refused like none', async () => {
      const admin = await adminSession(ctx);
      assertRefusedWith(await signIn(person('forged'), 'not-an-invitation'), 'invitation_required', /unknown/);
      const revoked = await invite(ctx.app, admin.accessToken);
      const del = await ctx.app.inject({
        method: 'DELETE',
        url: `/api/auth/admin/invitations/${revoked.id}`,
        headers: bearer(admin.accessToken),
      });
      assert.equal(del.statusCode, 204);
      assertRefusedWith(await signIn(person('revoked'), revoked.token), 'invitation_required', /unknown/);
    });

    test('someone who already has an account signs in and leaves the invitation unused', async () => {
      const admin = await adminSession(ctx);
      const first = await invite(ctx.app, admin.accessToken);
      const sub = person('twice');
      const me = await whoAmI(await signIn(sub, first.token));
      const second = await invite(ctx.app, admin.accessToken);
      assert.equal((await whoAmI(await signIn(sub, second.token))).id, me.id);
      assert.ok((await openInvitations(admin.accessToken)).includes(second.id), 'still open');
      assert.equal(me.is_admin, false);
    });

    test('the invitation cannot be altered on the way: it travels in the signed cookie', async () => {
      const admin = await adminSession(ctx);
      const invitation = await invite(ctx.app, admin.accessToken);
      const started = await ctx.app.inject({
        method: 'GET',
        url: `/api/auth/oidc/login?invitation=${invitation.token}`,
      });
      const signed = cookie(started, 'app.oidc')!.value;
      const [payload] = signed.split('.');
      const value = JSON.parse(Buffer.from(decodeURIComponent(payload!), 'base64url').toString('utf8')) as object;
      assert.equal((value as { invitation?: string }).invitation, invitation.token);
      // Any change breaks the signature: the callback finds no pending login.
      const forged = `${Buffer.from(JSON.stringify({ ...value, invitation: 'another' })).toString('base64url')}.${signed.split('.')[1]}`;
      const back = await signInAtProvider(started.headers.location as string, person('forger'), REDIRECT_URI);
      const res = await ctx.app.inject({
        method: 'GET',
        url: `${back.pathname}${back.search}`,
        cookies: { 'app.oidc': forged },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'oidc_refused');
    });

    test('SIGNUP=closed: refused without an invitation (signup_closed), created with one', async () => {
      await ctx.rebuild({
        SIGNUP: 'closed',
        PUBLIC_URL,
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
      });
      const admin = await adminSession(ctx);
      assertRefusedWith(await signIn(person('closed')), 'signup_closed', /Sign-up is closed/);
      const invitation = await invite(ctx.app, admin.accessToken);
      const me = await whoAmI(await signIn(person('welcome'), invitation.token));
      assert.equal(me.is_admin, false);
    });
  },
  { RATE_LIMIT: 'off' },
);
