import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';
import { expectNoContent, expectProblem, MISSING_ID, okJson, TIMESTAMP, UUID_V4, type Note } from '../notes/support.js';
import { organiseClient, type Folder } from './support.js';

const expectFolderNotFound = (res: Parameters<typeof expectProblem>[0]) =>
  expectProblem(res, 404, 'Folder not found', 'folder_not_found');
const expectNameTaken = (res: Parameters<typeof expectProblem>[0]) =>
  expectProblem(res, 409, 'A folder with this name already exists here', 'folder_name_taken');
const expectCycle = (res: Parameters<typeof expectProblem>[0]) =>
  expectProblem(res, 409, 'A folder cannot be moved into itself or below itself', 'folder_cycle');
const NAME_RULE =
  'must be 1 to 100 characters (trimmed) without / \\ < > : " | ? * or control characters, not end with a dot, ' +
  'and not be a device name Windows reserves (CON, PRN, AUX, NUL, COM1, LPT1, ...)';

forEachDatabase('folders', (ctx) => {
  const api = organiseClient(() => ctx.app);

  test('POST /api/folders: 201, Location, the folder; the name is stored trimmed', async () => {
    const s = await newSession(ctx.app);
    const res = await api.createFolder(s, { name: '  Work  ' });
    assert.equal(res.statusCode, 201, res.body);
    const folder = res.json() as Folder;
    assert.deepEqual(Object.keys(folder), ['id', 'name', 'parent_id', 'created_at', 'updated_at']);
    assert.match(folder.id, UUID_V4);
    assert.match(folder.created_at, TIMESTAMP);
    assert.deepEqual(folder, {
      id: folder.id,
      name: 'Work',
      parent_id: null,
      created_at: folder.created_at,
      updated_at: folder.created_at,
    });
    assert.equal(res.headers.location, `/api/folders/${folder.id}`);
    const child = await api.folder(s, 'Plans', folder.id);
    assert.equal(child.parent_id, folder.id);
    assert.deepEqual(
      (await api.folders(s)).map((f) => [f.name, f.parent_id, f.note_count]),
      [
        ['Plans', folder.id, 0],
        ['Work', null, 0],
      ],
    );
  });

  test('folder names: every rule refused with one message, valid names on every OS accepted', async () => {
    const s = await newSession(ctx.app);
    for (const name of [
      '',
      '   ',
      'a/b',
      'a\\b',
      'tab\there',
      'nul\u0000',
      'a:b',
      'a*b',
      'why?',
      '<x>',
      'a|b',
      '"q"',
      '.',
      '..',
      'end.',
      'CON',
      'con.txt',
      'Lpt1',
      'x'.repeat(101),
      '\u0085next',
    ]) {
      expectProblem(
        await api.createFolder(s, { name }),
        400,
        `Invalid request body: name ${NAME_RULE}`,
        'validation_failed',
      );
    }
    for (const name of [
      'x',
      '.hidden',
      'Console',
      'COM10',
      'Café ☕',
      'x'.repeat(100),
      'a.b',
      '日本語',
      ` ${'y'.repeat(100)} `,
    ]) {
      assert.equal((await api.createFolder(s, { name })).statusCode, 201, name);
    }
    expectProblem(
      await api.createFolder(s, { name: 3 }),
      400,
      'Invalid request body: name must be a string',
      'validation_failed',
    );
    assert.equal((await api.createFolder(s, { name: 'ok', extra: 1 })).statusCode, 400);
    assert.equal((await api.createFolder(s, { name: 'ok', parent_id: 'nope' })).statusCode, 400);
  });

  test('sibling names are unique ignoring case (and Unicode composition): 409; the same name elsewhere is fine', async () => {
    const s = await newSession(ctx.app);
    const work = await api.folder(s, 'Work');
    expectNameTaken(await api.createFolder(s, { name: 'WORK' }));
    expectNameTaken(await api.createFolder(s, { name: ' work ' }));
    await api.folder(s, 'Café');
    expectNameTaken(await api.createFolder(s, { name: 'CAFE\u0301' }));
    await api.folder(s, 'Work', work.id); // a child may share its parent's name
    expectNameTaken(await api.createFolder(s, { name: 'work', parent_id: work.id }));
    const home = await api.folder(s, 'Home');
    expectNameTaken(await api.updateFolder(s, home.id, { name: 'wOrK' }));
    // Renaming to a new case of its own name is not a clash.
    assert.equal(okJson<Folder>(await api.updateFolder(s, home.id, { name: 'HOME' })).name, 'HOME');
    // Another user has their own namespace.
    await api.folder(await newSession(ctx.app), 'Work');
  });

  test('PATCH /api/folders/{id}: rename, move, back to the top; never into itself or below itself', async () => {
    const s = await newSession(ctx.app);
    const a = await api.folder(s, 'A');
    const b = await api.folder(s, 'B', a.id);
    const c = await api.folder(s, 'C', b.id);
    const other = await api.folder(s, 'Other');
    expectCycle(await api.updateFolder(s, a.id, { parent_id: a.id }));
    expectCycle(await api.updateFolder(s, a.id, { parent_id: b.id }));
    expectCycle(await api.updateFolder(s, a.id, { parent_id: c.id }));
    const moved = okJson<Folder>(await api.updateFolder(s, c.id, { parent_id: other.id, name: 'C2' }));
    assert.deepEqual(moved, { ...c, name: 'C2', parent_id: other.id, updated_at: moved.updated_at });
    assert.ok(moved.updated_at >= c.updated_at);
    assert.equal(okJson<Folder>(await api.updateFolder(s, b.id, { parent_id: null })).parent_id, null);
    // Now A is a leaf: moving it under C2 (not its descendant) is fine.
    assert.equal(okJson<Folder>(await api.updateFolder(s, a.id, { parent_id: c.id })).parent_id, c.id);
    expectProblem(
      await api.updateFolder(s, a.id, {}),
      400,
      'Invalid request body: must give name or parent_id',
      'validation_failed',
    );
    expectFolderNotFound(await api.updateFolder(s, a.id, { parent_id: MISSING_ID }));
    expectFolderNotFound(await api.updateFolder(s, MISSING_ID, { name: 'x' }));
  });

  test('a deep tree: 32 levels (the limit, issue #37), a move below the bottom is a cycle, the bottom moves to the top', async () => {
    const s = await newSession(ctx.app);
    const chain: Folder[] = [await api.folder(s, 'level 0')];
    for (let i = 1; i < 32; i += 1) chain.push(await api.folder(s, `level ${i}`, chain[i - 1]!.id));
    expectCycle(await api.updateFolder(s, chain[0]!.id, { parent_id: chain[31]!.id }));
    assert.equal(okJson<Folder>(await api.updateFolder(s, chain[31]!.id, { parent_id: null })).parent_id, null);
    assert.equal((await api.folders(s)).length, 32);
  });

  test('DELETE /api/folders/{id}: subfolders go too, notes inside go to the trash, a restore brings them to the top level', async () => {
    const s = await newSession(ctx.app);
    const work = await api.folder(s, 'Work');
    const plans = await api.folder(s, 'Plans', work.id);
    const keep = await api.folder(s, 'Keep');
    const inWork = await api.note(s, '#alpha', 'in work', work.id);
    const inPlans = await api.note(s, 'deep', 'in plans', plans.id);
    const kept = await api.note(s, 'kept', 'kept', keep.id);
    const top = await api.note(s, 'top', 'top');
    assert.deepEqual(
      (await api.folders(s)).map((f) => [f.name, f.note_count]),
      [
        ['Keep', 1],
        ['Plans', 1],
        ['Work', 1],
      ],
    );

    expectNoContent(await api.deleteFolder(s, work.id));
    assert.deepEqual(
      (await api.folders(s)).map((f) => f.name),
      ['Keep'],
    );
    assert.deepEqual(new Set(await api.ids(s)), new Set([kept.id, top.id]));
    assert.deepEqual(await api.tags(s), []);
    const trash = okJson<Array<{ id: string }>>(await api.call(s, 'GET', '/api/trash'));
    assert.deepEqual(new Set(trash.map((t) => t.id)), new Set([inWork.id, inPlans.id]));
    expectFolderNotFound(await api.deleteFolder(s, work.id));
    expectFolderNotFound(await api.deleteFolder(s, plans.id));

    const restored = okJson<Note>(await api.call(s, 'POST', `/api/trash/${inWork.id}/restore`));
    assert.equal(restored.folder_id, null);
    assert.deepEqual(restored.tags, ['alpha']);
    assert.deepEqual(await api.tags(s), [{ name: 'alpha', count: 1 }]);
    assert.deepEqual((await api.list(s, '?folder=root')).map((n) => n.id).sort(), [inWork.id, top.id].sort());
  });

  test('note_count: notes directly inside, trash excluded, archived included', async () => {
    const s = await newSession(ctx.app);
    const f = await api.folder(s, 'F');
    const sub = await api.folder(s, 'Sub', f.id);
    const a = await api.note(s, '', 'a', f.id);
    await api.note(s, '', 'b', f.id);
    await api.note(s, '', 'c', sub.id);
    await api.fileOk(s, a.id, { archived: true });
    const trashed = await api.note(s, '', 'd', f.id);
    expectNoContent(await api.call(s, 'DELETE', `/api/notes/${trashed.id}`));
    assert.deepEqual(
      (await api.folders(s)).map((row) => [row.name, row.note_count]),
      [
        ['F', 2],
        ['Sub', 1],
      ],
    );
  });

  test("another user's folders are invisible: 404 on every route, never a parent nor a target", async () => {
    const owner = await newSession(ctx.app);
    const stranger = await newSession(ctx.app);
    const folder = await api.folder(owner, 'Private');
    assert.deepEqual(await api.folders(stranger), []);
    expectFolderNotFound(await api.updateFolder(stranger, folder.id, { name: 'Mine' }));
    expectFolderNotFound(await api.deleteFolder(stranger, folder.id));
    expectFolderNotFound(await api.createFolder(stranger, { name: 'Inside', parent_id: folder.id }));
    const note = await api.note(stranger, '', 'n');
    expectFolderNotFound(await api.file(stranger, note.id, { folder_id: folder.id }));
    expectFolderNotFound(await api.call(stranger, 'POST', '/api/notes', { folder_id: folder.id }));
    expectFolderNotFound(await api.call(stranger, 'GET', `/api/notes?folder=${folder.id}`));
    assert.deepEqual(
      (await api.folders(owner)).map((f) => f.name),
      ['Private'],
    );
  });
});

forEachDatabase(
  'folders with TRASH_DAYS=0',
  (ctx) => {
    const api = organiseClient(() => ctx.app);
    test('deleting a folder deletes its notes at once', async () => {
      const s = await newSession(ctx.app);
      const f = await api.folder(s, 'F');
      const note = await api.note(s, '#gone', 'n', f.id);
      expectNoContent(await api.deleteFolder(s, f.id));
      assert.equal((await api.call(s, 'GET', `/api/notes/${note.id}`)).statusCode, 404);
      assert.deepEqual(okJson(await api.call(s, 'GET', '/api/trash')), []);
      assert.deepEqual(await api.tags(s), []);
    });
  },
  { TRASH_DAYS: '0' },
);

forEachDatabase('folder moves under concurrency', (ctx) => {
  const raced = racedApp(ctx);
  const api = organiseClient(() => raced.app);

  test('two crossing moves (A into B, B into A): the second waits for the first and is then a cycle, 409', async () => {
    const s = await newSession(raced.app);
    const a = await api.folder(s, 'A');
    const b = await api.folder(s, 'B');
    const held = raced.pause.arm('folders:move-checked');
    const first = api.updateFolder(s, a.id, { parent_id: b.id });
    await held.reached;
    // The first move has passed its cycle check and holds the tree; the crossing move must queue.
    const second = api.updateFolder(s, b.id, { parent_id: a.id });
    let queued: boolean;
    try {
      queued = await queuedBehindLock(ctx, second);
    } finally {
      held.release();
    }
    assert.equal(queued, true);
    assert.equal(okJson<Folder>(await first).parent_id, b.id);
    expectCycle(await second);
    const tree = new Map((await api.folders(s)).map((f) => [f.id, f.parent_id]));
    assert.deepEqual([tree.get(a.id), tree.get(b.id)], [b.id, null]);
  });
});
