import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { expectNoteNotFound, expectProblem, MISSING_ID, NOTE_KEYS, okJson, type Note } from '../notes/support.js';
import { organiseClient } from './support.js';

const clock = frozenDate();

forEachDatabase('filing notes', (ctx) => {
  const api = organiseClient(() => ctx.app);

  test('PATCH /api/notes/{id}: folder, pin, archive; no new version, updated_at and ETag unchanged', async () => {
    const s = await newSession(ctx.app);
    const folder = await api.folder(s, 'Work');
    const note = await api.note(s, 'body #t', 'title');
    clock.tick();
    const res = await api.file(s, note.id, { folder_id: folder.id, pinned: true });
    const filed = okJson<Note>(res);
    assert.deepEqual(Object.keys(filed), NOTE_KEYS);
    assert.deepEqual(filed, { ...note, folder_id: folder.id, pinned: true });
    assert.equal(res.headers.etag, '"1"');
    assert.deepEqual(await api.fileOk(s, note.id, { archived: true, pinned: false }), {
      ...note,
      folder_id: folder.id,
      archived: true,
    });
    assert.deepEqual(await api.fileOk(s, note.id, { folder_id: null, archived: false }), note);
    const versions = okJson<unknown[]>(await api.call(s, 'GET', `/api/notes/${note.id}/versions`));
    assert.equal(versions.length, 1);
  });

  test('PATCH /api/notes/{id}: bad bodies are 400, unknown notes and folders 404', async () => {
    const s = await newSession(ctx.app);
    const note = await api.note(s, '');
    expectProblem(
      await api.file(s, note.id, {}),
      400,
      'Invalid request body: must give folder_id, pinned or archived',
      'validation_failed',
    );
    expectProblem(
      await api.file(s, note.id, { pinned: 'yes' }),
      400,
      'Invalid request body: pinned must be true or false',
      'validation_failed',
    );
    assert.equal((await api.file(s, note.id, { pinned: true, title: 'x' })).statusCode, 400);
    assert.equal((await api.file(s, note.id, { folder_id: 'root' })).statusCode, 400);
    expectProblem(await api.file(s, note.id, { folder_id: MISSING_ID }), 404, 'Folder not found', 'folder_not_found');
    expectNoteNotFound(await api.file(s, MISSING_ID, { pinned: true }));
    expectNoteNotFound(await api.file(await newSession(ctx.app), note.id, { pinned: true }));
  });

  test('GET /api/notes: pinned first, then most recently updated; archived left out unless asked for', async () => {
    const s = await newSession(ctx.app);
    const notes: Note[] = [];
    for (const title of ['a', 'b', 'c', 'd']) {
      clock.tick();
      notes.push(await api.note(s, '', title));
    }
    const [a, b, c, d] = notes as [Note, Note, Note, Note];
    assert.deepEqual(await api.ids(s), [d.id, c.id, b.id, a.id]);
    await api.fileOk(s, a.id, { pinned: true });
    await api.fileOk(s, b.id, { pinned: true });
    await api.fileOk(s, c.id, { archived: true });
    assert.deepEqual(await api.ids(s), [b.id, a.id, d.id]);
    assert.deepEqual(await api.ids(s, '?archived=true'), [c.id]);
    assert.deepEqual(await api.ids(s, '?pinned=true'), [b.id, a.id]);
    assert.deepEqual(await api.ids(s, '?pinned=false'), [d.id]);
    assert.deepEqual(await api.ids(s, '?limit=1&offset=1'), [a.id]);
    // An edit moves a note up among its own kind only.
    clock.tick();
    await api.save(s, a.id, 'edited');
    assert.deepEqual(await api.ids(s), [a.id, b.id, d.id]);
    const rows = await api.list(s);
    assert.deepEqual(
      rows.map((r) => [r.pinned, r.archived]),
      [
        [true, false],
        [true, false],
        [false, false],
      ],
    );
    for (const [query, detail] of [
      ['?archived=maybe', '"archived" must be true or false'],
      ['?pinned=2', '"pinned" must be true or false'],
      ['?folder=nowhere', '"folder" must be a folder id or root'],
      ['?tag=a%20b', '"tag" must be a tag: 1 to 64 letters, digits, _, - or /, optionally after a #'],
      ['?tag=%00', '"tag" must be a tag: 1 to 64 letters, digits, _, - or /, optionally after a #'],
      [`?tag=${'a'.repeat(65)}`, '"tag" must be a tag: 1 to 64 letters, digits, _, - or /, optionally after a #'],
    ]) {
      expectProblem(await api.call(s, 'GET', `/api/notes${query}`), 400, `Query parameter ${detail!}`, 'invalid_query');
    }
  });

  test("GET /api/notes?folder=: one folder's notes (not its subfolders'), root for the top level; filters combine", async () => {
    const s = await newSession(ctx.app);
    const work = await api.folder(s, 'Work');
    const sub = await api.folder(s, 'Sub', work.id);
    const inWork = await api.note(s, '#x', 'w', work.id);
    const inSub = await api.note(s, '#x', 's', sub.id);
    const top = await api.note(s, '#x', 't');
    assert.equal(inWork.folder_id, work.id);
    assert.deepEqual(await api.ids(s, `?folder=${work.id}`), [inWork.id]);
    assert.deepEqual(await api.ids(s, `?folder=${sub.id.toUpperCase()}`), [inSub.id]);
    assert.deepEqual(await api.ids(s, '?folder=root'), [top.id]);
    assert.deepEqual(await api.ids(s, `?folder=${work.id}&tag=x`), [inWork.id]);
    await api.fileOk(s, inWork.id, { archived: true });
    assert.deepEqual(await api.ids(s, `?folder=${work.id}`), []);
    assert.deepEqual(await api.ids(s, `?folder=${work.id}&archived=true&tag=x`), [inWork.id]);
    expectProblem(
      await api.call(s, 'GET', `/api/notes?folder=${MISSING_ID}`),
      404,
      'Folder not found',
      'folder_not_found',
    );
  });
});
