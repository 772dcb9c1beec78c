import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { notesClient } from '../notes/support.js';

// Issue #42 item 10: "Empty trash" — DELETE /api/trash deletes every note in the caller's trash for good.

forEachDatabase('DELETE /trash (empty the trash)', (ctx) => {
  const api = notesClient(() => ctx.app);

  test("deletes every trashed note of the caller for good, and nothing else: live notes and another user's trash stay", async () => {
    const owner = await newSession(ctx.app);
    const other = await newSession(ctx.app);
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) {
      const note = await api.createOk(owner, { title, content: title });
      ids.push(note.id);
    }
    const kept = await api.createOk(owner, { title: 'kept', content: 'kept' });
    const theirs = await api.createOk(other, { title: 'theirs', content: 'x' });
    for (const id of ids) assert.equal((await api.remove(owner, id)).statusCode, 204);
    assert.equal((await api.remove(other, theirs.id)).statusCode, 204);

    const res = await ctx.app.inject({ method: 'DELETE', url: '/api/trash', headers: owner.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: 3 });
    const trash = await ctx.app.inject({ method: 'GET', url: '/api/trash', headers: owner.auth });
    assert.deepEqual(trash.json(), []);
    for (const id of ids) {
      assert.equal((await ctx.database.db.selectFrom('notes').select('id').where('id', '=', id).execute()).length, 0);
      assert.equal(
        (await ctx.database.db.selectFrom('note_versions').select('note_id').where('note_id', '=', id).execute())
          .length,
        0,
      );
    }
    assert.equal((await api.get(owner, kept.id)).statusCode, 200);
    const theirTrash = await ctx.app.inject({ method: 'GET', url: '/api/trash', headers: other.auth });
    assert.deepEqual(
      (theirTrash.json() as Array<{ id: string }>).map((r) => r.id),
      [theirs.id],
    );
    // An empty trash empties to nothing.
    const again = await ctx.app.inject({ method: 'DELETE', url: '/api/trash', headers: owner.auth });
    assert.deepEqual(again.json(), { deleted: 0 });
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: '/api/trash' })).statusCode, 401);
  });
});
