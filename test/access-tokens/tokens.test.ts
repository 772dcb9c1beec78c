import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { isValidPersonalToken } from '../../src/access-tokens/personal-token.js';
import { assertProblem, assertReauthenticationRequired, bearer, newAdminSession } from '../helpers/auth.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, GOOD_PASSWORD, login, signup, uniqueName, type Session } from '../helpers/harness.js';

const clock = frozenDate();
const TOKEN = /^vlm_[0-9A-Za-z]{38}$/;
const MINUTE = 60_000;

forEachDatabase('personal access tokens', (ctx) => {
  const app = () => ctx.app;
  const newUser = async () => login(app(), (await signup(app(), uniqueName('pat'))).username);
  const create = (session: Session, body: Record<string, unknown>) =>
    app().inject({
      method: 'POST',
      url: '/api/auth/tokens',
      headers: session.auth,
      payload: { password: GOOD_PASSWORD, ...body },
    });
  async function token(
    session: Session,
    scopes: string[],
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; token: string }> {
    const res = await create(session, { name: 'script', scopes, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }
  const as = (t: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    app().inject({ method, url, headers: bearer(t), ...(payload === undefined ? {} : { payload }) });

  test('created with the password again, shown once, only its SHA-256 kept', async () => {
    const user = await newUser();
    assertReauthenticationRequired(
      await create(user, { name: 'x', scopes: ['notes:read'], password: 'not-the-password-at-all' }),
      'wrong password',
    );
    assertReauthenticationRequired(
      await app().inject({
        method: 'POST',
        url: '/api/auth/tokens',
        headers: user.auth,
        payload: { name: 'x', scopes: ['notes:read'] },
      }),
      'no password',
    );
    // The rest of the body is checked first, as before: a bad one is 400 whatever the password.
    assert.equal((await create(user, { name: 'x', scopes: [], password: 'not-the-password-at-all' })).statusCode, 400);
    assert.deepEqual((await app().inject({ method: 'GET', url: '/api/auth/tokens', headers: user.auth })).json(), []);
    const res = await create(user, {
      name: '  Backup script  ',
      scopes: ['notes:write', 'notes:read', 'notes:read'],
      expires_in_days: 30,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'created_at',
      'expires_at',
      'id',
      'last_used_at',
      'name',
      'scopes',
      'token',
    ]);
    assert.match(body.token, TOKEN);
    assert.deepEqual(
      [body.name, body.scopes, body.last_used_at],
      ['Backup script', ['notes:read', 'notes:write'], null],
    );
    assert.equal(Date.parse(body.expires_at) - Date.parse(body.created_at), 30 * 24 * 60 * MINUTE);
    const list = (await app().inject({ method: 'GET', url: '/api/auth/tokens', headers: user.auth })).json();
    assert.deepEqual(
      list,
      [{ ...body, token: undefined }].map(({ token: _t, ...rest }) => rest),
    );
    const row = await ctx.database.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.token_hash, createHash('sha256').update(body.token).digest('hex'));
    assert.ok(!JSON.stringify(row).includes(body.token.slice(4, 20)), 'the secret is nowhere in the row');
  });

  test('a name of spaces only, or with a control character or an unpaired surrogate, is 400 naming the rule', async () => {
    const user = await newUser();
    for (const name of ['   ', 't\u0000b', 'tab\there', 'line\nbreak', 'del\u007f', 'lone \udfff']) {
      const res = await create(user, { name, scopes: ['notes:read'] });
      assertProblem(res, 400, 'Name must not be only spaces, nor hold control characters');
    }
    assert.deepEqual((await app().inject({ method: 'GET', url: '/api/auth/tokens', headers: user.auth })).json(), []);
    // Any other character is a name's: accents, right-to-left text, emoji.
    const res = await create(user, { name: 'Sauvegarde — نسخة 📦', scopes: ['notes:read'] });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('scopes: notes:read for reads, notes:write for the rest; never on /api/auth', async () => {
    const user = await newUser();
    const reader = await token(user, ['notes:read']);
    const writer = await token(user, ['notes:write']);
    assert.equal((await as(reader.token, 'GET', '/api/notes')).statusCode, 200);
    // A good token without the scope is 403 naming the scope (issue #42), not a failed sign-in.
    const refused = await as(reader.token, 'POST', '/api/notes', { title: 't' });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'insufficient_scope');
    assert.equal(refused.json().required_scope, 'notes:write');
    assert.match(refused.json().detail, /notes:write/);
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="notes:write"');
    const created = await as(writer.token, 'POST', '/api/notes', { title: 'from a script', content: 'hello' });
    assert.equal(created.statusCode, 201);
    assert.equal(created.json().owner_id, user.userId);
    const unread = await as(writer.token, 'GET', '/api/notes');
    assert.equal(unread.statusCode, 403);
    assert.equal(unread.json().required_scope, 'notes:read');
    assert.equal((await as(reader.token, 'GET', `/api/notes/${created.json().id}`)).json().content, 'hello');
    for (const url of ['/api/auth/me', '/api/auth/tokens', '/api/auth/sessions']) {
      const res = await as(reader.token, 'GET', url);
      assert.equal(res.statusCode, 401, url);
    }
    assert.equal(
      (
        await as(writer.token, 'POST', '/api/auth/tokens', {
          name: 'x',
          scopes: ['notes:read'],
          password: GOOD_PASSWORD,
        })
      ).statusCode,
      401,
    );
    const admin = await newAdminSession(ctx);
    const adminToken = await token(admin, ['notes:read', 'notes:write']);
    assert.equal(
      (await as(adminToken.token, 'GET', '/api/auth/admin/all')).statusCode,
      401,
      'no administration by token',
    );
  });

  test('refused without a look-up when malformed; expired, revoked and deleted-account tokens are 401', async () => {
    const user = await newUser();
    const { id, token: t } = await token(user, ['notes:read'], { expires_in_days: 1 });
    const flipped = `${t.slice(0, 10)}${t[10] === 'a' ? 'b' : 'a'}${t.slice(11)}`;
    assert.equal(isValidPersonalToken(t), true);
    assert.equal(isValidPersonalToken(flipped), false, 'the checksum catches a changed character');
    for (const bad of [flipped, 'vlm_', `${t}x`, 'vlm_short'])
      assert.equal((await as(bad, 'GET', '/api/notes')).statusCode, 401);
    assert.equal((await as(t, 'GET', '/api/notes')).statusCode, 200);
    clock.tick(24 * 60 * MINUTE + 1);
    assert.equal((await as(t, 'GET', '/api/notes')).statusCode, 401, 'expired');

    const again = await login(app(), user.username); // a day on, the first access token has expired too
    const other = await token(again, ['notes:read']);
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/auth/tokens/${other.id}`, headers: again.auth })).statusCode,
      204,
    );
    assert.equal((await as(other.token, 'GET', '/api/notes')).statusCode, 401, 'revoked at once');
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/auth/tokens/${id}`, headers: (await newUser()).auth }))
        .statusCode,
      404,
    );

    // A password change keeps tokens; deleting the account removes them.
    const keeper = await newUser();
    const kept = await token(keeper, ['notes:read']);
    const changed = await app().inject({
      method: 'PUT',
      url: '/api/auth/owner',
      headers: keeper.auth,
      payload: { old_password: GOOD_PASSWORD, new_password: `${GOOD_PASSWORD}-2` },
    });
    assert.equal(changed.statusCode, 200);
    assert.equal((await as(kept.token, 'GET', '/api/notes')).statusCode, 200);
    assert.equal(
      (
        await app().inject({
          method: 'DELETE',
          url: '/api/auth/owner',
          headers: bearer(changed.json().access_token),
          payload: { password: `${GOOD_PASSWORD}-2` },
        })
      ).statusCode,
      204,
    );
    assert.equal((await as(kept.token, 'GET', '/api/notes')).statusCode, 401);
    assert.equal(
      (await ctx.database.db.selectFrom('access_tokens').select('id').where('user_id', '=', keeper.userId).execute())
        .length,
      0,
    );
  });

  test('last use is written at most once a minute; creation and revocation are audited', async () => {
    const user = await newUser();
    const { id, token: t } = await token(user, ['notes:read']);
    const lastUsed = async () =>
      (await app().inject({ method: 'GET', url: '/api/auth/tokens', headers: user.auth }))
        .json()
        .find((row: { id: string }) => row.id === id).last_used_at as string | null;
    assert.equal(await lastUsed(), null);
    await as(t, 'GET', '/api/notes');
    const first = await lastUsed();
    assert.equal(first, new Date().toISOString());
    clock.tick(30_000);
    await as(t, 'GET', '/api/notes');
    assert.equal(await lastUsed(), first, 'not again within the minute');
    clock.tick(31_000);
    await as(t, 'GET', '/api/notes');
    assert.equal(await lastUsed(), new Date().toISOString());

    await app().inject({ method: 'DELETE', url: `/api/auth/tokens/${id}`, headers: user.auth });
    const admin = await newAdminSession(ctx);
    const events = (
      await app().inject({ method: 'GET', url: `/api/auth/admin/events?user_id=${user.userId}`, headers: admin.auth })
    ).json() as Array<{ kind: string; detail: string }>;
    assert.deepEqual(
      events
        .filter((e) => e.kind.startsWith('token_'))
        .map((e) => `${e.kind}: ${e.detail}`)
        .reverse(),
      [`token_create: token ${id} (notes:read)`, `token_revoke: token ${id}`],
    );
  });
});
