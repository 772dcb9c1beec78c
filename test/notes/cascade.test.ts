import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { expectNoContent, expectNoteNotFound, expectProblem, notesClient, okJson, type Note } from './support.js';

forEachDatabase('notes deletion cascades', (ctx) => {
  const api = notesClient(() => ctx.app);
  const db = () => ctx.database.db;
  const versionRows = (noteIds: string[]) =>
    db().selectFrom('note_versions').select(['id', 'note_id']).where('note_id', 'in', noteIds).execute();

  test('DELETE /api/notes/{id} hides the note and every version; purging it from the trash removes them', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'doomed', content: 'v1' });
    const kept = await api.createOk(s, { title: 'kept', content: 'k1' });
    for (let v = 2; v <= 4; v += 1) await api.addVersionOk(s, note.id, { title: `doomed ${v}`, content: `v${v}` });
    await api.addVersionOk(s, kept.id, { title: 'kept 2', content: 'k2' });
    const history = await api.history(s, note.id);
    assert.equal(history.length, 4);
    for (const row of history) assert.equal((await api.version(s, note.id, row.id)).statusCode, 200);

    expectNoContent(await api.remove(s, note.id));

    // Through HTTP: the note, its history and every version URL are 404.
    expectNoteNotFound(await api.get(s, note.id));
    expectNoteNotFound(await api.versions(s, note.id));
    for (const row of history) expectNoteNotFound(await api.version(s, note.id, row.id));
    expectNoteNotFound(await api.addVersion(s, note.id, { title: 'zombie', content: '' }));
    expectNoteNotFound(await api.remove(s, note.id));

    // In the trash the rows are kept for a restore; deleting it from there removes them.
    assert.equal((await versionRows([note.id])).length, 4);
    expectNoContent(await ctx.app.inject({ method: 'DELETE', url: `/api/trash/${note.id}`, headers: s.auth }));

    // In the database: no row of the note or its versions; the other note is whole.
    assert.deepEqual(await db().selectFrom('notes').select('id').where('id', '=', note.id).execute(), []);
    assert.deepEqual(await versionRows([note.id]), []);
    assert.equal((await versionRows([kept.id])).length, 2);
    assert.deepEqual(
      okJson<Note[]>(await api.list(s)).map((n) => n.id),
      [kept.id],
    );
    assert.deepEqual(
      (await api.history(s, kept.id)).map((r) => r.version),
      [2, 1],
    );
  });

  test('DELETE /api/auth/owner removes every note and version of that user, and only theirs', async () => {
    const doomed = await newSession(ctx.app, 'doomed');
    const other = await newSession(ctx.app, 'other');
    const notes: Note[] = [];
    for (let i = 0; i < 3; i += 1) {
      const note = await api.createOk(doomed, { title: `n${i}`, content: `c${i}` });
      await api.addVersionOk(doomed, note.id, { title: `n${i} v2`, content: `c${i} v2` });
      notes.push(note);
    }
    const survivor = await api.createOk(other, { title: 'survivor', content: 's' });
    const ids = notes.map((n) => n.id);
    assert.equal(
      (await db().selectFrom('notes').select('id').where('owner_id', '=', doomed.userId).execute()).length,
      3,
    );
    assert.equal((await versionRows(ids)).length, 6);

    const res = await ctx.app.inject({
      method: 'DELETE',
      url: '/api/auth/owner',
      headers: doomed.auth,
      payload: { password: doomed.password },
    });
    expectNoContent(res);

    assert.deepEqual(await db().selectFrom('users').select('id').where('id', '=', doomed.userId).execute(), []);
    assert.deepEqual(await db().selectFrom('notes').select('id').where('owner_id', '=', doomed.userId).execute(), []);
    assert.deepEqual(await db().selectFrom('notes').select('id').where('id', 'in', ids).execute(), []);
    assert.deepEqual(await versionRows(ids), []);
    // The other user's note and its version are untouched.
    assert.deepEqual(okJson<Note>(await api.get(other, survivor.id)), survivor);
    assert.equal((await versionRows([survivor.id])).length, 1);

    // The deleted user's access token lives until it expires, but owns nothing and can create nothing.
    assert.deepEqual(okJson(await api.list(doomed)), []);
    for (const id of ids) expectNoteNotFound(await api.get(doomed, id));
    expectProblem(await api.create(doomed, { title: 'orphan' }), 404, 'User not found', 'user_not_found');
    assert.deepEqual(await db().selectFrom('notes').select('id').where('owner_id', '=', doomed.userId).execute(), []);
  });
});
