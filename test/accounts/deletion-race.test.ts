import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, bearer, newAdminSession } from '../helpers/auth.js';
import { forEachDatabase } from '../helpers/harness.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';

forEachDatabase('deletion races', (ctx) => {
  const raced = racedApp(ctx);

  test('two administrators deleting each other at once: one 204, the other refused (409, or 401 once its own account is gone), and an administrator is left', async () => {
    const a = await newAdminSession(ctx);
    const b = await newAdminSession(ctx);
    // Only these two are administrators in this test's database.
    await ctx.database.db.updateTable('users').set({ is_admin: false }).where('id', 'not in', [a.userId, b.userId]).execute();
    const gate = raced.pause.arm('delete:locked');
    const first = raced.app.inject({ method: 'DELETE', url: `/api/auth/admin/${b.userId}`, headers: bearer(a.accessToken) });
    await gate.reached;
    // The first deletion holds both administrators' rows; the second waits for it instead of
    // taking one of them (which, each waiting for the other's, would deadlock on PostgreSQL).
    const second = ctx.app.inject({ method: 'DELETE', url: `/api/auth/admin/${a.userId}`, headers: bearer(b.accessToken) });
    const queued = await queuedBehindLock(ctx, second);
    gate.release();
    const [won, lost] = await Promise.all([first, second]);
    assert.equal(queued, true, 'the second deletion waits for the first');
    assert.equal(won.statusCode, 204, won.body);
    if (ctx.kind === 'postgres') {
      // The second caller was checked (a plain read) before the first committed; its deletion then
      // finds one administrator left.
      assertProblem(lost, 409, 'Cannot delete the last administrator');
    } else {
      // SQLite's one connection queued even the admin check behind the first deletion, which had
      // already removed the second caller's account.
      assertProblem(lost, 401, 'Unauthorized');
    }
    const admins = await ctx.database.db.selectFrom('users').select('id').where('is_admin', '=', true).execute();
    assert.deepEqual(admins, [{ id: a.userId }]);
    assert.equal((await ctx.app.inject({ url: '/api/auth/me', headers: bearer(a.accessToken) })).statusCode, 200);
  });
});
