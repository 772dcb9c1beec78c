import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertProblem, bearer, newAdminSession } from '../helpers/auth.js';
import { forEachDatabase } from '../helpers/harness.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';

forEachDatabase('deletion races', (ctx) => {
  const raced = racedApp(ctx);
  const alsoRaced = racedApp(ctx);

  test('two administrators deleting each other at once: one 204, the other refused (409, or 401 once its own account is gone), and an administrator is left', async () => {
    const a = await newAdminSession(ctx);
    const b = await newAdminSession(ctx);
    // Only these two are administrators in this test's database.
    await ctx.database.db
      .updateTable('users')
      .set({ is_admin: false })
      .where('id', 'not in', [a.userId, b.userId])
      .execute();
    // The second deletion passes its checks first (once the first has ended b's sessions, b's token
    // is refused on /api/auth), and waits there.
    const checked = alsoRaced.pause.arm('delete:checked');
    const second = alsoRaced.app.inject({
      method: 'DELETE',
      url: `/api/auth/admin/${a.userId}`,
      headers: bearer(b.accessToken),
    });
    await checked.reached;
    const gate = raced.pause.arm('delete:locked');
    const first = raced.app.inject({
      method: 'DELETE',
      url: `/api/auth/admin/${b.userId}`,
      headers: bearer(a.accessToken),
    });
    await gate.reached;
    // The first deletion holds both administrators' rows; the second waits for it instead of
    // taking one of them (which, each waiting for the other's, would deadlock on PostgreSQL).
    checked.release();
    const queued = await queuedBehindLock(ctx, second);
    gate.release();
    const [won, lost] = await Promise.all([first, second]);
    assert.equal(queued, true, 'the second deletion waits for the first');
    assert.equal(won.statusCode, 204, won.body);
    // The second then finds one administrator left.
    assertProblem(lost, 409, 'Cannot delete the last administrator');
    const admins = await ctx.database.db.selectFrom('users').select('id').where('is_admin', '=', true).execute();
    assert.deepEqual(admins, [{ id: a.userId }]);
    // The losing deletion had ended a's sessions before it was refused (accounts.service.ts, removeUser):
    // a's token goes with them, and a logs in again.
    assertProblem(await ctx.app.inject({ url: '/api/auth/me', headers: bearer(a.accessToken) }), 401, 'Unauthorized');
    assert.equal(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: a.username, password: a.password },
        })
      ).statusCode,
      200,
    );
  });
});
