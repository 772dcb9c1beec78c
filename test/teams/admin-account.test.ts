import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { assertProblem, bearer, newAdminSession } from '../helpers/auth.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { uploadRaw } from '../attachments/support.js';
import { enrolledUser } from '../mfa/support.js';
import { auditEvents } from './support.js';

type Row = Record<string, unknown> & { id: string };

forEachDatabase('GET /auth/admin/{id}: one account as administrators see it', (ctx) => {
  let admin: Session;
  const read = (id: string, token: string | null = admin.accessToken) =>
    ctx.app.inject({ method: 'GET', url: `/api/auth/admin/${id}`, headers: token === null ? {} : bearer(token) });
  const patch = (id: string, payload: object) =>
    ctx.app.inject({ method: 'PATCH', url: `/api/auth/admin/${id}`, headers: bearer(admin.accessToken), payload });

  /** The account's row in GET /auth/admin/all, walking its pages. */
  async function listed(id: string): Promise<Row> {
    for (let offset = 0; ; offset += 100) {
      const res = await ctx.app.inject({
        url: `/api/auth/admin/all?limit=100&offset=${offset}`,
        headers: bearer(admin.accessToken),
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as Row[] | null;
      assert.ok(page !== null, `account ${id} is not in the list`);
      const found = page.find((row) => row.id === id);
      if (found !== undefined) return found;
    }
  }

  test('200: exactly the row the list gives, for accounts whose every fact differs from the default', async () => {
    admin = await newAdminSession(ctx);
    // An authenticator app, an e-mail address, attachments, its own quota, disabled.
    const full = await enrolledUser(ctx.app);
    assert.equal((await uploadRaw(ctx.app, full, Buffer.alloc(7, 1))).statusCode, 201);
    await ctx.database.db
      .updateTable('users')
      .set({ email: 'full@example.com' })
      .where('id', '=', full.userId)
      .execute();
    assert.equal((await patch(full.userId, { storage_quota_bytes: 4096, disabled: true })).statusCode, 200);
    // An administrator with the defaults, and one that never logged in.
    const promoted = await newSession(ctx.app, 'promoted');
    assert.equal((await patch(promoted.userId, { is_admin: true })).statusCode, 200);
    const fresh = randomUUID();
    const at = new Date().toISOString();
    await ctx.database.db
      .insertInto('users')
      .values({
        id: fresh,
        username: `fresh${fresh.slice(0, 8)}`,
        password_hash: '',
        is_admin: false,
        created_at: at,
        updated_at: at,
      })
      .execute();

    for (const id of [full.userId, promoted.userId, fresh, admin.userId]) {
      const res = await read(id);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(res.json(), await listed(id));
    }
    const row = (await read(full.userId)).json() as Row;
    assert.equal(row.email, 'full@example.com');
    assert.equal(row.disabled, true);
    assert.deepEqual(row.mfa, { totp: true, passkeys: 0 });
    assert.equal(typeof row.last_login_at, 'string');
    assert.equal(row.storage_used_bytes, 7);
    assert.equal(row.storage_quota_bytes, 4096);
    assert.equal(row.is_admin, false);
    assert.equal(((await read(promoted.userId)).json() as Row).is_admin, true);
    assert.equal(((await read(fresh)).json() as Row).last_login_at, null);
    // An upper-case UUID names the same account, as on PATCH and DELETE.
    assert.deepEqual((await read(full.userId.toUpperCase())).json(), row);
  });

  test('404 User not found for an unknown id; a malformed one is 400 Resource ID missing, as PATCH answers it', async () => {
    admin ??= await newAdminSession(ctx);
    const unknown = await read(randomUUID());
    assertProblem(unknown, 404, 'User not found');
    assert.equal(unknown.json().code, 'user_not_found');
    const uuid = randomUUID();
    for (const id of ['not-a-uuid', '123', `${uuid}0`, uuid.slice(1), uuid.replaceAll('-', ''), `{${uuid}}`, '%20']) {
      const res = await read(id);
      assertProblem(res, 400, 'Resource ID missing');
      assert.equal(res.json().code, 'resource_id_missing');
      assert.deepEqual(res.json(), (await patch(id, { disabled: false })).json(), id);
    }
  });

  test('401 without a valid access token, 403 Forbidden for a non-administrator (whatever the id)', async () => {
    admin ??= await newAdminSession(ctx);
    const user = await newSession(ctx.app, 'plain');
    assertProblem(await read(user.userId, null), 401, 'Unauthorized');
    assertProblem(await read(user.userId, admin.refreshToken), 401, 'Unauthorized');
    assertProblem(await read(user.userId, 'not.a.token'), 401, 'Unauthorized');
    for (const id of [user.userId, admin.userId, randomUUID(), 'not-a-uuid']) {
      assertProblem(await read(id, user.accessToken), 403, 'Forbidden');
    }
  });

  test('audited as admin_view_user (success and unknown id), and no list read is recorded', async () => {
    const boss = await newAdminSession(ctx);
    const target = await newSession(ctx.app, 'viewed');
    const missing = randomUUID();
    assert.equal((await read(target.userId, boss.accessToken)).statusCode, 200);
    assert.equal((await read(missing, boss.accessToken)).statusCode, 404);
    const viewed = (await auditEvents(ctx.app, boss.accessToken, 'admin_view_user')).filter(
      (e) => e.user_id === boss.userId,
    );
    assert.deepEqual(
      viewed.map(({ outcome, detail }) => ({ outcome, detail })),
      [
        { outcome: 'failure', detail: `user ${missing} not found` },
        { outcome: 'success', detail: `user ${target.userId}` },
      ],
    );
    const lists = await auditEvents(ctx.app, boss.accessToken, 'admin_list_users');
    assert.ok(!lists.some((e) => e.user_id === boss.userId));
  });
});
