import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newAdminSession, REFRESH, setCookies } from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName, type Session } from '../helpers/harness.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { del, enrolledUser, post } from './support.js';

const clock = frozenDate();
const PUBLIC_URL = 'https://notes.example.test';

forEachDatabase(
  'second factor: passkeys',
  (ctx) => {
    const app = () => ctx.app;

    async function addPasskey(session: Session, name = 'Laptop', authenticator = new SoftAuthenticator(PUBLIC_URL)) {
      const options = await post(app(), '/api/auth/passkeys/options', session.accessToken, { password: GOOD_PASSWORD });
      assert.equal(options.statusCode, 200, options.body);
      const res = await post(app(), '/api/auth/passkeys', session.accessToken, {
        name,
        credential: authenticator.register(options.json()),
      });
      return { res, authenticator };
    }

    async function passkeyLogin(
      authenticator: SoftAuthenticator,
      opts: Parameters<SoftAuthenticator['authenticate']>[1] = {},
      query = '',
    ) {
      const options = await post(app(), '/api/auth/passkey/options', undefined);
      assert.equal(options.statusCode, 200, options.body);
      return app().inject({
        method: 'POST',
        url: `/api/auth/passkey/login${query}`,
        payload: { credential: authenticator.authenticate(options.json(), opts) },
      });
    }

    const newUser = async () => login(app(), (await signup(app(), uniqueName('pk'))).username);

    test('options name the relying party from PUBLIC_URL and require user verification', async () => {
      await ctx.rebuild({ PUBLIC_URL: `${PUBLIC_URL}/some/path` });
      const user = await newUser();
      const create = (await post(app(), '/api/auth/passkeys/options', user.accessToken)).json();
      assert.deepEqual(create.rp, { name: 'Vellum', id: 'notes.example.test' });
      assert.equal(create.user.name, user.username);
      assert.equal(create.authenticatorSelection.userVerification, 'required');
      assert.equal(create.authenticatorSelection.residentKey, 'required');
      assert.equal(create.attestation, 'none');
      assert.match(create.challenge, /^[A-Za-z0-9_-]{43}$/);
      const get = (await post(app(), '/api/auth/passkey/options', undefined)).json();
      assert.equal(get.rpId, 'notes.example.test');
      assert.equal(get.userVerification, 'required');
      assert.equal((await post(app(), '/api/auth/passkeys/options', undefined)).statusCode, 401);
    });

    test('register several, name them, sign in without a password, remove one', async () => {
      const user = await newUser();
      const first = await addPasskey(user, '  Laptop  ');
      assert.equal(first.res.statusCode, 201, first.res.body);
      const body = first.res.json();
      assert.deepEqual(Object.keys(body).sort(), ['backed_up', 'created_at', 'id', 'last_used_at', 'name']);
      assert.equal(body.name, 'Laptop');
      assert.equal(body.last_used_at, null);
      clock.tick();
      const second = await addPasskey(user, 'Phone');
      assert.equal(second.res.statusCode, 201);
      const list = await app().inject({ method: 'GET', url: '/api/auth/passkeys', headers: user.auth });
      assert.deepEqual(
        list.json().map((p: { name: string }) => p.name),
        ['Laptop', 'Phone'],
      );
      const me = await app().inject({ method: 'GET', url: '/api/auth/me', headers: user.auth });
      assert.deepEqual(me.json().mfa, { totp: false, passkeys: 2 });

      // Passwordless: exactly what POST /auth/login answers.
      const signedIn = await passkeyLogin(second.authenticator, {}, '?includeUser=true');
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      assert.deepEqual(Object.keys(signedIn.json()).sort(), ['access_token', 'user']);
      assert.equal(signedIn.json().user.username, user.username);
      assert.ok(setCookies(signedIn).get(REFRESH)?.value);
      assert.equal(signedIn.headers['cache-control'], 'no-store');
      const used = (await app().inject({ method: 'GET', url: '/api/auth/passkeys', headers: user.auth })).json();
      assert.equal(used[0].last_used_at, null);
      assert.match(used[1].last_used_at, /^\d{4}-/);

      assert.equal(
        (await del(app(), `/api/auth/passkeys/${body.id}`, user.accessToken, { password: GOOD_PASSWORD })).statusCode,
        204,
      );
      assert.equal(
        (await del(app(), `/api/auth/passkeys/${body.id}`, user.accessToken, { password: GOOD_PASSWORD })).json()
          .detail,
        'Passkey not found',
      );
      assert.equal((await passkeyLogin(first.authenticator)).statusCode, 401, 'a removed passkey no longer signs in');
      // Someone else's passkey cannot be removed by id.
      const stranger = await newUser();
      assert.equal(
        (await del(app(), `/api/auth/passkeys/${used[1].id}`, stranger.accessToken, { password: GOOD_PASSWORD }))
          .statusCode,
        404,
      );
    });

    test('a passkey login needs no further factor, even with an authenticator app set up', async () => {
      const user = await enrolledUser(app());
      const { authenticator } = await addPasskey(user);
      assert.equal((await passkeyLogin(authenticator)).statusCode, 200);
    });

    test('refused: no user verification, another origin, a reused or expired challenge, a counter going back', async () => {
      const user = await newUser();
      const options = (
        await post(app(), '/api/auth/passkeys/options', user.accessToken, { password: GOOD_PASSWORD })
      ).json();
      const unverified = new SoftAuthenticator(PUBLIC_URL);
      const refused = await post(app(), '/api/auth/passkeys', user.accessToken, {
        name: 'No UV',
        credential: unverified.register(options, { userVerified: false }),
      });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().code, 'passkey_rejected');
      // That challenge is spent even though the answer was refused.
      const again = await post(app(), '/api/auth/passkeys', user.accessToken, {
        name: 'Again',
        credential: unverified.register(options),
      });
      assert.equal(again.json().code, 'passkey_challenge');

      const { authenticator } = await addPasskey(user);
      const invalid = (res: { statusCode: number; json(): { detail: string } }) => {
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().detail, 'Invalid credentials');
      };
      invalid(await passkeyLogin(authenticator, { userVerified: false }));
      invalid(await passkeyLogin(authenticator, { origin: 'https://evil.example.test' }));
      // A counter that does not move forward (a cloned authenticator).
      assert.equal((await passkeyLogin(authenticator, { counter: 5 })).statusCode, 200);
      invalid(await passkeyLogin(authenticator, { counter: 5 }));
      invalid(await passkeyLogin(authenticator, { counter: 3 }));
      assert.equal((await passkeyLogin(authenticator, { counter: 6 })).statusCode, 200);

      // One challenge, one login.
      const login1 = (await post(app(), '/api/auth/passkey/options', undefined)).json();
      const credential = authenticator.authenticate(login1);
      assert.equal(
        (await app().inject({ method: 'POST', url: '/api/auth/passkey/login', payload: { credential } })).statusCode,
        200,
      );
      invalid(await app().inject({ method: 'POST', url: '/api/auth/passkey/login', payload: { credential } }));
      // Five minutes is the limit.
      const late = (await post(app(), '/api/auth/passkey/options', undefined)).json();
      clock.tick(5 * 60_000 + 1);
      invalid(
        await app().inject({
          method: 'POST',
          url: '/api/auth/passkey/login',
          payload: { credential: authenticator.authenticate(late) },
        }),
      );
      // Garbage is a 400 from the schema, never a 500.
      for (const payload of [
        {},
        { credential: {} },
        { credential: { ...credential, response: { clientDataJSON: '%%%' } } },
      ]) {
        assert.equal((await app().inject({ method: 'POST', url: '/api/auth/passkey/login', payload })).statusCode, 400);
      }
      const notJson = {
        ...credential,
        response: { ...credential.response, clientDataJSON: Buffer.from('not json').toString('base64url') },
      };
      invalid(await app().inject({ method: 'POST', url: '/api/auth/passkey/login', payload: { credential: notJson } }));
    });

    test("an administrator's removal takes the passkeys too; a deleted account's passkeys go with it", async () => {
      const user = await newUser();
      const { authenticator } = await addPasskey(user);
      const admin = await newAdminSession(ctx);
      assert.equal((await del(app(), `/api/auth/admin/${user.userId}/mfa`, admin.accessToken)).statusCode, 204);
      assert.equal((await passkeyLogin(authenticator)).statusCode, 401);

      const leaving = await newUser();
      const second = await addPasskey(leaving);
      assert.equal(
        (await del(app(), '/api/auth/owner', leaving.accessToken, { password: leaving.password })).statusCode,
        204,
      );
      assert.equal((await passkeyLogin(second.authenticator)).statusCode, 401);
      assert.equal(
        (await ctx.database.db.selectFrom('passkeys').select('id').where('user_id', '=', leaving.userId).execute())
          .length,
        0,
      );
    });
  },
  { PUBLIC_URL },
);
