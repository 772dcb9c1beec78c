import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { queuedBehindLock, racedApp } from '../helpers/pause.js';
import { expectProblem, okJson } from '../notes/support.js';
import { zipDirectory } from '../export/support.js';
import { insertChain, insertFlat } from './folder-fixtures.js';
import { organiseClient } from './support.js';

type Res = Parameters<typeof expectProblem>[0];
const expectTooDeep = (res: Res) => expectProblem(res, 409, 'Folders nest at most 32 levels deep', 'folder_too_deep');
const expectLimit = (res: Res) => expectProblem(res, 409, 'An account holds at most 10,000 folders', 'folder_limit');
const names = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);
const davPath = (segments: string[]) => `/dav/${segments.map(encodeURIComponent).join('/')}/`;

/**
 * Issue #37, finding 5: folders nest at most 32 deep and an account holds at most 10,000, whichever
 * way they are made (API, WebDAV, import), checked under the tree's lock; trees made deeper before
 * the limit still export, whole and correct.
 */
forEachDatabase('folder limits', (ctx) => {
  const raced = racedApp(ctx);
  const app = () => raced.app;
  const api = organiseClient(app);
  const db = () => ctx.database.db;
  const count = async (s: Session) => (await api.folders(s)).length;
  const dav = (s: Session, method: string, url: string, headers: Record<string, string> = {}) =>
    app().inject({ method: method as 'GET', url, headers: { ...s.auth, ...headers } });
  const importDoc = (s: Session, document: unknown) =>
    app().inject({ method: 'POST', url: '/api/import', headers: s.auth, payload: document as string });
  const doc = (folders: string[], noteFolder: string | null = null) => ({
    format: 'vellum-export',
    format_version: 2,
    folders,
    notes: [
      {
        title: 'n',
        created_at: '2024-01-01T00:00:00.000Z',
        updated_at: '2024-01-01T00:00:00.000Z',
        folder: noteFolder,
        versions: [{ version: 1, title: 'n', content: 'c', created_at: '2024-01-01T00:00:00.000Z' }],
      },
    ],
  });
  const noNotes = async (s: Session) =>
    assert.deepEqual(okJson<unknown[]>(await app().inject({ method: 'GET', url: '/api/notes', headers: s.auth })), []);

  test('POST /api/folders: 32 levels deep is made, the 33rd is 409 folder_too_deep', async () => {
    const s = await newSession(app());
    let parent: string | null = null;
    for (const name of names(32, 'd')) parent = (await api.folder(s, name, parent)).id;
    expectTooDeep(await api.createFolder(s, { name: 'd33', parent_id: parent }));
    assert.equal(await count(s), 32);
  });

  test('PATCH (move): a subtree whose deepest folder would be 33 deep is 409; 32 is fine', async () => {
    const s = await newSession(app());
    const [a1] = await insertChain(db(), s.userId, ['a1', 'a2']);
    const c = await insertChain(db(), s.userId, names(31, 'c'));
    expectTooDeep(await api.updateFolder(s, a1!, { parent_id: c[30] }));
    assert.equal((await api.updateFolder(s, a1!, { parent_id: c[29] })).statusCode, 200);
    assert.equal((await api.updateFolder(s, a1!, { name: 'renamed' })).statusCode, 200);
  });

  test('WebDAV: MKCOL 33 deep, MOVE or COPY of a collection past 32 are 409; nothing is made', async () => {
    const s = await newSession(app());
    const e = names(32, 'e');
    await insertChain(db(), s.userId, e);
    await insertChain(db(), s.userId, ['a1', 'a2']);
    expectTooDeep(await dav(s, 'MKCOL', davPath([...e, 'x'])));
    assert.equal((await dav(s, 'MKCOL', davPath([...e.slice(0, 31), 'x']))).statusCode, 201);
    // Onto the existing x (Overwrite: T by default): refused before x is replaced.
    const deepDestination = `http://localhost${davPath([...e.slice(0, 31), 'x'])}`;
    expectTooDeep(await dav(s, 'MOVE', davPath(['a1']), { destination: deepDestination }));
    expectTooDeep(await dav(s, 'COPY', davPath(['a1']), { destination: deepDestination, depth: 'infinity' }));
    assert.equal(await count(s), 32 + 2 + 1);
    assert.equal((await dav(s, 'PROPFIND', davPath([...e.slice(0, 31), 'x']), { depth: '0' })).statusCode, 207);
    // A path with more names than folders can nest is answered at once, without a query per name.
    assert.equal((await dav(s, 'PROPFIND', davPath(names(5_000, 'x')), { depth: '0' })).statusCode, 404);
  });

  test('import: a path more than 32 folders deep is 400 before anything is written (the finding: 4 paths 5,000 deep)', async () => {
    const s = await newSession(app());
    const deep = names(33, 'p').join('/');
    expectProblem(
      await importDoc(s, doc([deep])),
      400,
      'Invalid import document: folders[0] must be at most 32 folders deep',
      'invalid_import',
    );
    expectProblem(
      await importDoc(s, doc([], deep)),
      400,
      'Invalid import document: notes[0].folder must be at most 32 folders deep',
      'invalid_import',
    );
    const finding = Array.from({ length: 4 }, (_, i) =>
      Array.from({ length: 5_000 }, () => String.fromCharCode(97 + i)).join('/'),
    );
    assert.equal((await importDoc(s, doc(finding))).statusCode, 400);
    assert.equal(await count(s), 0);
    await noNotes(s);
  });

  test('the 10,001st folder is 409 folder_limit: by the API, WebDAV and import (nothing of that import stays)', async () => {
    const s = await newSession(app());
    await insertFlat(db(), s.userId, 9_999);
    const importing = await importDoc(s, doc(['n1', 'n2/n3'], 'n1'));
    expectLimit(importing);
    await noNotes(s);
    assert.equal(await count(s), 9_999);
    assert.equal((await api.createFolder(s, { name: 'last' })).statusCode, 201);
    expectLimit(await api.createFolder(s, { name: 'one too many' }));
    expectLimit(await dav(s, 'MKCOL', davPath(['dav one too many'])));
    // An import that makes no new folder still works at the limit.
    assert.equal((await importDoc(s, doc(['last'], 'last'))).statusCode, 201);
    assert.equal(await count(s), 10_000);
  });

  test("two creates racing at 9,999: the second waits for the first's lock and is then 409", {
    timeout: 30_000,
  }, async () => {
    const s = await newSession(app());
    await insertFlat(db(), s.userId, 9_999);
    const held = raced.pause.arm('folders:create-checked');
    const first = api.createFolder(s, { name: 'first' });
    await held.reached;
    // The first has counted 9,999 and holds the tree; the second must queue behind it, not count too.
    const second = api.createFolder(s, { name: 'second' });
    assert.equal(await queuedBehindLock(ctx, second), true);
    held.release();
    assert.equal((await first).statusCode, 201);
    expectLimit(await second);
    assert.equal(await count(s), 10_000);
  });

  // Review of #37: the tree lock must not be a lock on the user's row, which every foreign-key check
  // to users (a refresh token at login, a note's insert) also takes (FOR KEY SHARE): an import that
  // made folders held the owner's logins and saves for its whole transaction. SQLite has one writer
  // by design; there the held transaction queues every write, which is what this checks on PostgreSQL only.
  if (ctx.kind === 'postgres')
    test('while a folder create holds the tree, the same user logs in and saves a note', {
      timeout: 30_000,
    }, async () => {
      const s = await newSession(app());
      const held = raced.pause.arm('folders:create-checked');
      const creating = api.createFolder(s, { name: 'held' });
      await held.reached;
      try {
        const login = app().inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: s.username, password: s.password },
        });
        assert.equal(await queuedBehindLock(ctx, login), false, 'login waited on the folder tree lock');
        assert.equal((await login).statusCode, 200);
        const save = app().inject({
          method: 'POST',
          url: '/api/notes',
          headers: s.auth,
          payload: { title: 't', content: 'c' },
        });
        assert.equal(await queuedBehindLock(ctx, save), false, 'a note create waited on the folder tree lock');
        assert.equal((await save).statusCode, 201);
      } finally {
        held.release();
      }
      assert.equal((await creating).statusCode, 201);
    });

  test('a tree made 5,000 deep before the limit: exports whole (JSON and Markdown), moves up, cannot grow', async () => {
    const s = await newSession(app());
    const chain = names(5_000, '');
    const ids = await insertChain(db(), s.userId, chain);
    const note = await api.note(s, 'at the bottom', 'Deep', ids.at(-1)!);
    const path = (depth: number) => chain.slice(0, depth).join('/');

    const json = okJson<{ folders: string[]; notes: Array<{ id: string; folder: string | null }> }>(
      await app().inject({ method: 'GET', url: '/api/export', headers: s.auth }),
    );
    assert.equal(json.folders.length, 5_000);
    json.folders.forEach((folder, i) => assert.equal(folder, path(i + 1)));
    assert.deepEqual(
      json.notes.map((n) => n.folder),
      [path(5_000)],
    );

    const zip = await app().inject({ method: 'GET', url: '/api/export?format=markdown', headers: s.auth });
    assert.equal(zip.statusCode, 200);
    // A directory entry per level down to 32, then only the empty bottom one (deeper levels are implied by its path).
    const entries = zipDirectory(zip.rawPayload).map((entry) => entry.name);
    assert.deepEqual(entries, [
      ...Array.from({ length: 32 }, (_, i) => `${path(i + 1)}/`),
      `${path(5_000)}/`,
      `${path(5_000)}/Deep.md`,
    ]);

    expectTooDeep(await api.createFolder(s, { name: 'more', parent_id: ids.at(-1) }));
    // Moving part of it up makes it shallower: allowed, though still deeper than 32; back down is not.
    assert.equal((await api.updateFolder(s, ids[10]!, { parent_id: null })).statusCode, 200);
    expectTooDeep(await api.updateFolder(s, ids[10]!, { parent_id: ids[5] }));
    assert.equal(
      (await app().inject({ method: 'GET', url: `/api/notes/${note.id}`, headers: s.auth })).statusCode,
      200,
    );
  });
});
