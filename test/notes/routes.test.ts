import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import {
  expectNoContent,
  JSON_TYPE,
  NOTE_KEYS,
  UNFILED,
  NOTE_ROW_KEYS,
  notesClient,
  okJson,
  TIMESTAMP,
  UUID_V4,
  VERSION_KEYS,
  VERSION_ROW_KEYS,
  type Note,
  type VersionRow,
} from './support.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

forEachDatabase('notes routes: statuses and shapes', (ctx) => {
  const api = notesClient(() => ctx.app);
  /** One account for the tests that only look at their own notes. */
  let shared: Session;
  before(async () => {
    shared = await newSession(ctx.app);
  });

  test('POST /api/notes: 201, Location, ETag "1" and the full note', async () => {
    const s = shared;
    const res = await api.create(s, { title: 'Groceries', content: 'milk\neggs' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const note = res.json() as Note;
    assert.deepEqual(Object.keys(note), NOTE_KEYS);
    assert.match(note.id, UUID_V4);
    assert.match(note.version_id, UUID_V4);
    assert.notEqual(note.version_id, note.id);
    assert.match(note.created_at, TIMESTAMP);
    assert.deepEqual(note, {
      id: note.id,
      owner_id: s.userId,
      title: 'Groceries',
      content: 'milk\neggs',
      version: 1,
      version_id: note.version_id,
      created_at: note.created_at,
      updated_at: note.created_at,
      ...UNFILED,
    });
    assert.equal(res.headers.location, `/api/notes/${note.id}`);
    assert.equal(res.headers.etag, '"1"');
    // What POST answered is what GET returns.
    assert.deepEqual(okJson(await api.get(s, note.id)), note);
  });

  test('POST /api/notes: placeholders for absent fields, no body and an empty JSON body', async () => {
    const s = shared;
    const cases: Array<[string, Record<string, unknown>, { title: string; content: string }]> = [
      ['no body at all', {}, { title: 'Untitled', content: '' }],
      [
        'empty body with content-type json',
        { payload: '', headers: { 'content-type': 'application/json' } },
        { title: 'Untitled', content: '' },
      ],
      [
        'whitespace body with content-type json',
        { payload: ' \n', headers: { 'content-type': 'application/json' } },
        { title: 'Untitled', content: '' },
      ],
      ['{}', { payload: {} }, { title: 'Untitled', content: '' }],
      ['title only', { payload: { title: 'Only a title' } }, { title: 'Only a title', content: '' }],
      ['content only', { payload: { content: 'Only content' } }, { title: 'Untitled', content: 'Only content' }],
      ['empty strings are kept', { payload: { title: '', content: '' } }, { title: '', content: '' }],
    ];
    for (const [name, options, expected] of cases) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        ...options,
        headers: { ...s.auth, ...(options.headers as object) },
      });
      assert.equal(res.statusCode, 201, `${name}: ${res.body}`);
      const note = res.json() as Note;
      assert.deepEqual(Object.keys(note), NOTE_KEYS, name);
      assert.deepEqual(
        { title: note.title, content: note.content, version: note.version },
        { ...expected, version: 1 },
        name,
      );
      assert.equal(res.headers.location, `/api/notes/${note.id}`, name);
      const stored = okJson<Note>(await api.get(s, note.id));
      assert.deepEqual({ title: stored.title, content: stored.content }, expected, name);
    }
  });

  test('GET /api/notes/{id}: the full note with ETag "<version>", current version supplies title and content', async () => {
    const s = shared;
    const created = await api.createOk(s, { title: 'v1', content: 'one' });
    const first = await api.get(s, created.id);
    assert.equal(first.headers.etag, '"1"');
    assert.deepEqual(okJson(first), created);

    clock.tick();
    await api.addVersionOk(s, created.id, { title: 'v2', content: 'two' });
    const res = await api.get(s, created.id);
    assert.equal(res.headers.etag, '"2"');
    const note = okJson<Note>(res);
    assert.deepEqual(Object.keys(note), NOTE_KEYS);
    const history = await api.history(s, created.id);
    assert.deepEqual(note, {
      id: created.id,
      owner_id: s.userId,
      title: 'v2',
      content: 'two',
      version: 2,
      version_id: history[0]!.id,
      created_at: created.created_at,
      updated_at: history[0]!.created_at,
      ...UNFILED,
    });
    assert.ok(note.updated_at > created.updated_at);
    // Uppercase UUIDs name the same note.
    assert.deepEqual(okJson(await api.get(s, created.id.toUpperCase())), note);
  });

  test('GET /api/notes: rows {id, owner_id, title, updated_at, filing, preview}, most recently updated first; [] when none', async () => {
    const s = await newSession(ctx.app);
    assert.deepEqual(okJson(await api.list(s)), []);
    const notes: Note[] = [];
    for (const title of ['first', 'second', 'third']) {
      clock.tick();
      notes.push(await api.createOk(s, { title, content: `${title} content` }));
    }
    const row = (n: Note, title = n.title, updated_at = n.updated_at, preview = `${n.title} content`) => ({
      id: n.id,
      owner_id: s.userId,
      title,
      updated_at,
      ...UNFILED,
      preview,
    });
    const rows = okJson<Array<Record<string, unknown>>>(await api.list(s));
    for (const r of rows) assert.deepEqual(Object.keys(r), NOTE_ROW_KEYS);
    assert.deepEqual(rows, [row(notes[2]!), row(notes[1]!), row(notes[0]!)]);

    // A new version moves the note to the top and its row shows the new title.
    clock.tick();
    await api.addVersionOk(s, notes[0]!.id, { title: 'first, edited', content: 'x' });
    const updated = okJson<Note>(await api.get(s, notes[0]!.id));
    assert.deepEqual(okJson(await api.list(s)), [
      row(notes[0]!, 'first, edited', updated.updated_at, 'x'),
      row(notes[2]!),
      row(notes[1]!),
    ]);
  });

  test('DELETE /api/notes/{id}: 204 without a body; the note is gone', async () => {
    const s = await newSession(ctx.app);
    const keep = await api.createOk(s, { title: 'keep' });
    const note = await api.createOk(s, { title: 'delete me' });
    const res = await api.remove(s, note.id);
    expectNoContent(res);
    assert.equal(res.headers['content-type'], undefined);
    assert.equal((await api.get(s, note.id)).statusCode, 404);
    assert.equal((await api.remove(s, note.id)).statusCode, 404);
    assert.deepEqual(
      okJson<Note[]>(await api.list(s)).map((n) => n.id),
      [keep.id],
    );
  });

  test('POST /api/notes/{id}/versions: 204 without a body, ETag of the new version', async () => {
    const s = shared;
    const note = await api.createOk(s);
    const res = await api.addVersion(s, note.id, { title: 'Second', content: 'body 2' });
    expectNoContent(res);
    assert.equal(res.headers.etag, '"2"');
    const third = await api.addVersion(s, note.id, { title: '', content: '' });
    expectNoContent(third);
    assert.equal(third.headers.etag, '"3"');
    const current = okJson<Note>(await api.get(s, note.id));
    assert.deepEqual([current.title, current.content, current.version], ['', '', 3]);
  });

  test('GET /api/notes/{id}/versions: rows {id, title, version, created_at, label, restored_from}, newest first', async () => {
    const s = shared;
    const note = await api.createOk(s, { title: 't1', content: 'c1' });
    await api.addVersionOk(s, note.id, { title: 't2', content: 'c2' });
    await api.addVersionOk(s, note.id, { title: 't3', content: 'c3' });
    const rows = okJson<VersionRow[]>(await api.versions(s, note.id));
    for (const r of rows) {
      assert.deepEqual(Object.keys(r), VERSION_ROW_KEYS);
      assert.match(r.id, UUID_V4);
      assert.match(r.created_at, TIMESTAMP);
    }
    assert.deepEqual(
      rows.map((r) => [r.title, r.version]),
      [
        ['t3', 3],
        ['t2', 2],
        ['t1', 1],
      ],
    );
    assert.equal(new Set(rows.map((r) => r.id)).size, 3);
    assert.deepEqual(rows[2], {
      id: note.version_id,
      title: 't1',
      version: 1,
      created_at: note.created_at,
      label: null,
      restored_from: null,
      author_username: s.username,
      authors: [s.username],
    });
    const current = okJson<Note>(await api.get(s, note.id));
    assert.equal(rows[0]!.id, current.version_id);
    assert.equal(rows[0]!.created_at, current.updated_at);
  });

  test('GET /api/notes/{id}/{versionID}: the full version {id, note_id, title, content, version, created_at, label, restored_from}', async () => {
    const s = shared;
    const note = await api.createOk(s, { title: 'old title', content: 'old content' });
    await api.addVersionOk(s, note.id, { title: 'new title', content: 'new content' });
    const [newest, oldest] = await api.history(s, note.id);

    const first = okJson<Record<string, unknown>>(await api.version(s, note.id, oldest!.id));
    assert.deepEqual(Object.keys(first), VERSION_KEYS);
    assert.deepEqual(first, {
      id: note.version_id,
      note_id: note.id,
      title: 'old title',
      content: 'old content',
      version: 1,
      created_at: note.created_at,
      label: null,
      restored_from: null,
      author_username: s.username,
      authors: [s.username],
    });
    const second = okJson(await api.version(s, note.id, newest!.id));
    assert.deepEqual(second, {
      id: newest!.id,
      note_id: note.id,
      title: 'new title',
      content: 'new content',
      version: 2,
      created_at: newest!.created_at,
      label: null,
      restored_from: null,
      author_username: s.username,
      authors: [s.username],
    });
    assert.deepEqual(okJson(await api.version(s, note.id.toUpperCase(), newest!.id.toUpperCase())), second);
  });
});
