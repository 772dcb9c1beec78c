import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, refreshSession, setCookies } from '../helpers/auth.js';
import { cookie, forEachDatabase, signup } from '../helpers/harness.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  OTHER_CLIENT_ID,
  signInAtProvider,
  startProvider,
  type TestProvider,
} from '../helpers/oidc.js';

const PUBLIC_URL = 'http://localhost:8080';
const REDIRECT_URI = `${PUBLIC_URL}/api/auth/oidc/callback`;
const REFUSED = /^Single sign-on failed: /;

const ACCOUNTS = {
  'sub-alice': { preferred_username: 'Alice.Example', email: 'alice@example.test', groups: ['staff'] },
  'sub-root': { preferred_username: 'root-admin', groups: ['staff', 'vellum-admins'] },
  'sub-taken': { preferred_username: 'taken-name', email: 'taken@example.test' },
  'sub-other': { preferred_username: 'someone-else' },
};

forEachDatabase('single sign-on with an OpenID Connect provider', (ctx) => {
  let provider: TestProvider;
  /** Another provider with the same client registration: an issuer Vellum does not know. */
  let stranger: TestProvider;
  before(async () => {
    provider = await startProvider(REDIRECT_URI, ACCOUNTS);
    stranger = await startProvider(REDIRECT_URI, ACCOUNTS);
    await ctx.rebuild({
      PUBLIC_URL,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_NAME: 'Example ID',
      OIDC_ADMIN_GROUP: 'vellum-admins',
    });
  });
  after(async () => {
    await provider.close();
    await stranger.close();
  });

  /** GET /oidc/login: the provider's URL and the pending-login cookie. */
  async function start(): Promise<{ url: URL; pending: string }> {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/oidc/login' });
    assert.equal(res.statusCode, 302, res.body);
    const pending = setCookies(res).get('app.oidc');
    assert.ok(pending !== undefined);
    assert.equal(pending.attributes.httponly, true);
    assert.equal(pending.attributes.path, '/api/auth/oidc');
    assert.equal(pending.attributes.samesite, 'Lax');
    return { url: new URL(res.headers.location as string), pending: cookie(res, 'app.oidc')!.value };
  }

  const callback = (url: URL, pending: string | undefined): Promise<LightMyRequestResponse> =>
    ctx.app.inject({
      method: 'GET',
      url: `${url.pathname}${url.search}`,
      ...(pending === undefined ? {} : { cookies: { 'app.oidc': pending } }),
    });

  /** The whole flow as a browser goes through it; answers the callback's response. */
  async function signIn(login: keyof typeof ACCOUNTS) {
    const { url, pending } = await start();
    const back = await signInAtProvider(url.href, login, REDIRECT_URI);
    return { res: await callback(back, pending), back, pending };
  }

  async function whoAmI(res: LightMyRequestResponse) {
    const refreshToken = cookie(res, 'app.refresh_token')!.value;
    const refreshed = await refreshSession(ctx.app, refreshToken);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const me = await ctx.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(refreshed.json().access_token),
    });
    return me.json() as { id: string; username: string; is_admin: boolean; email: string | null };
  }

  test('GET /auth/config names the provider; GET /oidc/login redirects with code flow, PKCE S256, state and nonce', async () => {
    const config = await ctx.app.inject({ method: 'GET', url: '/api/auth/config' });
    assert.deepEqual(config.json(), {
      signup: 'open',
      password_login: true,
      oidc: { name: 'Example ID' },
      passkeys: true,
    });
    const { url } = await start();
    assert.equal(url.origin, provider.issuer);
    const p = url.searchParams;
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('client_id'), CLIENT_ID);
    assert.equal(p.get('redirect_uri'), REDIRECT_URI);
    assert.equal(p.get('scope'), 'openid profile email');
    assert.equal(p.get('code_challenge_method'), 'S256');
    assert.match(p.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.ok((p.get('state') ?? '').length >= 22 && (p.get('nonce') ?? '').length >= 22);
  });

  test('the whole flow: a new account from the username claim, the refresh cookie as a login sets it, a redirect to /', async () => {
    const { res } = await signIn('sub-alice');
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(res.headers.location, '/');
    const cookies = setCookies(res);
    const refresh = cookies.get('app.refresh_token')!;
    assert.equal(refresh.attributes.path, '/api/auth/cookie');
    assert.equal(refresh.attributes.httponly, true);
    assert.equal(refresh.attributes.samesite, 'Strict');
    assert.ok(cookies.has('app.expires_at'));
    assert.equal(cookies.get('app.oidc')?.attributes['max-age'], '0', 'the pending login is spent');
    const me = await whoAmI(res);
    assert.equal(me.username, 'alice.example');
    assert.equal(me.is_admin, false);
    assert.equal(me.email, null, "the provider's address is not taken as verified here");

    const again = await signIn('sub-alice');
    assert.equal(again.res.statusCode, 302);
    assert.equal((await whoAmI(again.res)).id, me.id, 'issuer + subject find the same account');
    // No password: a password login of the account is the usual 401.
    const login = await ctx.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'alice.example', password: '' },
    });
    assert.equal(login.statusCode, 401);
  });

  test('a username that is taken gets another name: never linked to the existing account', async () => {
    const existing = await signup(ctx.app, 'taken-name');
    const { res } = await signIn('sub-taken');
    assert.equal(res.statusCode, 302, res.body);
    const me = await whoAmI(res);
    assert.notEqual(me.id, existing.id);
    assert.equal(me.username, 'taken-name-2');
  });

  test('members of OIDC_ADMIN_GROUP are administrators, at each sign-in; the last administrator is never demoted', async () => {
    const { res } = await signIn('sub-root');
    assert.equal(res.statusCode, 302, res.body);
    const root = await whoAmI(res);
    assert.equal(root.is_admin, true);

    // Removed from the group at the provider: no longer an administrator at the next sign-in,
    // unless that would leave none.
    const groups = ACCOUNTS['sub-root'].groups;
    ACCOUNTS['sub-root'].groups = ['staff'];
    try {
      await ctx.database.db.updateTable('users').set({ is_admin: false }).where('id', '!=', root.id).execute();
      assert.equal((await whoAmI((await signIn('sub-root')).res)).is_admin, true, 'the last administrator stays');
      const other = await signup(ctx.app);
      await ctx.database.db.updateTable('users').set({ is_admin: true }).where('id', '=', other.id).execute();
      assert.equal((await whoAmI((await signIn('sub-root')).res)).is_admin, false);
    } finally {
      ACCOUNTS['sub-root'].groups = groups;
    }
    assert.equal((await whoAmI((await signIn('sub-root')).res)).is_admin, true, 'back in the group');
  });

  function assertRefused(res: LightMyRequestResponse, what: string, reason: RegExp) {
    assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
    assert.match(res.json().detail, reason, what);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.match(res.json().detail, REFUSED, what);
    assert.equal(res.headers['set-cookie']?.toString().includes('app.refresh_token'), false, `${what}: no session`);
  }

  test('a wrong state, a missing pending login, and a replayed code are refused with 400 oidc_refused', async () => {
    const { url, pending } = await start();
    const back = await signInAtProvider(url.href, 'sub-other', REDIRECT_URI);
    const wrongState = new URL(back);
    wrongState.searchParams.set('state', 'not-the-state-we-sent');
    const res = await callback(wrongState, pending);
    assertRefused(res, 'wrong state', /"state"/);
    assert.equal(res.json().code, 'oidc_refused');
    assertRefused(await callback(back, undefined), 'no pending-login cookie', /no sign-in was started/);
    assertRefused(await callback(back, `${pending.slice(0, -2)}xx`), 'a tampered cookie', /no sign-in was started/);

    const ok = await callback(back, pending);
    assert.equal(ok.statusCode, 302, 'the right state still works');
    assertRefused(await callback(back, pending), 'the same code again', /invalid_grant/);
  });

  test('a code issued to another client is refused', async () => {
    const { url, pending } = await start();
    url.searchParams.set('client_id', OTHER_CLIENT_ID);
    const back = await signInAtProvider(url.href, 'sub-other', REDIRECT_URI);
    assertRefused(await callback(back, pending), 'code of another client', /invalid_grant/);
  });

  test("an ID token meant for another client (its aud) is refused, even from Vellum's own provider", async () => {
    // A real ID token of this provider, issued to another client: a full flow of that client.
    const first = await start();
    const pending = JSON.parse(Buffer.from(first.pending.split('.')[0]!, 'base64url').toString()) as {
      verifier: string;
    };
    first.url.searchParams.set('client_id', OTHER_CLIENT_ID);
    const back = await signInAtProvider(first.url.href, 'sub-other', REDIRECT_URI);
    const token = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${OTHER_CLIENT_ID}:${CLIENT_SECRET}-${OTHER_CLIENT_ID}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        code_verifier: pending.verifier,
      }),
    });
    assert.equal(token.status, 200, await token.clone().text());
    const foreign = ((await token.json()) as { id_token: string }).id_token;
    const aud = JSON.parse(Buffer.from(foreign.split('.')[1]!, 'base64url').toString()).aud;
    assert.equal(aud, OTHER_CLIENT_ID);

    // Vellum's own flow, whose token answer carries that ID token.
    const { url, pending: cookieValue } = await start();
    const mine = await signInAtProvider(url.href, 'sub-other', REDIRECT_URI);
    provider.swapNextIdToken(foreign);
    assertRefused(await callback(mine, cookieValue), 'ID token for another client', /"aud"/);
  });

  test('an answer from an issuer Vellum does not know is refused', async () => {
    const { url, pending } = await start();
    const foreign = new URL(`${url.pathname}${url.search}`, stranger.issuer);
    const back = await signInAtProvider(foreign.href, 'sub-other', REDIRECT_URI);
    assert.equal(back.searchParams.get('iss'), stranger.issuer);
    assertRefused(await callback(back, pending), 'unknown issuer', /"iss" \(issuer\)/);
  });
});

forEachDatabase('single sign-on, not set up', (ctx) => {
  test('both routes are 404 oidc_disabled and GET /auth/config says oidc: null', async () => {
    for (const url of ['/api/auth/oidc/login', '/api/auth/oidc/callback?code=x&state=y']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'oidc_disabled');
    }
    const config = await ctx.app.inject({ method: 'GET', url: '/api/auth/config' });
    assert.equal(config.json().oidc, null);
  });
});
