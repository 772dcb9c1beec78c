import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import {
  expectInvalidBody,
  expectNoteNotFound,
  expectProblem,
  expectVersionNotFound,
  JSON_TYPE,
  MISSING_ID,
  NOTE_KEYS,
  UNFILED,
  notesClient,
  okJson,
  TIMESTAMP,
  type Note,
  type VersionRow,
} from './support.js';

interface Version extends VersionRow {
  note_id: string;
  content: string;
}

forEachDatabase('notes history: restore and named versions', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;
  before(async () => {
    s = await newSession(ctx.app);
  });

  const restore = (session: Session, id: string, payload: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: `/api/notes/${id}/restore`,
      headers: { ...session.auth, ...headers },
      payload: payload as string,
    });
  const label = (session: Session, id: string, versionId: string, payload: unknown) =>
    ctx.app.inject({
      method: 'PATCH',
      url: `/api/notes/${id}/${versionId}`,
      headers: session.auth,
      payload: payload as string,
    });

  async function threeVersions() {
    const note = await api.createOk(s, { title: 'one', content: 'first' });
    await api.addVersionOk(s, note.id, { title: 'two', content: 'second' });
    await api.addVersionOk(s, note.id, { title: 'three', content: 'third' });
    return { note, history: await api.history(s, note.id) };
  }

  test('restore by number: 201, Location, ETag, the full note; a new version with restored_from', async () => {
    const { note } = await threeVersions();
    const res = await restore(s, note.id, { version: 1 });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const body = res.json() as Note;
    assert.deepEqual(Object.keys(body).sort(), [...NOTE_KEYS].sort());
    assert.equal(res.headers.location, `/api/notes/${note.id}/${body.version_id}`);
    assert.equal(res.headers.etag, '"4"');
    assert.deepEqual(
      { ...body, updated_at: 'x', version_id: 'x' },
      {
        id: note.id,
        owner_id: note.owner_id,
        title: 'one',
        content: 'first',
        version: 4,
        version_id: 'x',
        created_at: note.created_at,
        updated_at: 'x',
        ...UNFILED,
      },
    );
    assert.match(body.updated_at, TIMESTAMP);
    assert.deepEqual(okJson<Note>(await api.get(s, note.id)), body);
    const history = await api.history(s, note.id);
    assert.deepEqual(
      history.map((r) => [r.version, r.title, r.restored_from, r.label]),
      [
        [4, 'one', 1, null],
        [3, 'three', null, null],
        [2, 'two', null, null],
        [1, 'one', null, null],
      ],
    );
    const version = okJson<Version>(await api.version(s, note.id, body.version_id));
    assert.deepEqual(version, {
      id: body.version_id,
      note_id: note.id,
      title: 'one',
      content: 'first',
      version: 4,
      created_at: body.updated_at,
      label: null,
      restored_from: 1,
      author_username: s.username,
      authors: [s.username],
    });
  });

  test('restore by version_id, and of the current version (a new version all the same)', async () => {
    const { note, history } = await threeVersions();
    const byId = await restore(s, note.id, { version_id: history[1]!.id });
    assert.equal(byId.statusCode, 201, byId.body);
    assert.deepEqual([byId.json().title, byId.json().version], ['two', 4]);
    const current = await restore(s, note.id, { version: 4 });
    assert.equal(current.statusCode, 201, current.body);
    assert.deepEqual([current.json().title, current.json().content, current.json().version], ['two', 'second', 5]);
    assert.equal((await api.history(s, note.id))[0]!.restored_from, 4);
  });

  test('If-Match: the current ETag restores, a stale one is 412 with current_version and writes nothing', async () => {
    const { note } = await threeVersions();
    const stale = await restore(s, note.id, { version: 1 }, { 'if-match': '"2"' });
    expectProblem(stale, 412, 'The note has changed: its current version is 3', 'version_mismatch', {
      current_version: 3,
    });
    assert.equal(stale.headers.etag, '"3"');
    assert.equal((await api.history(s, note.id)).length, 3);
    const fresh = await restore(s, note.id, { version: 1 }, { 'if-match': '"3"' });
    assert.equal(fresh.statusCode, 201, fresh.body);
    assert.equal(fresh.headers.etag, '"4"');
    expectProblem(
      await restore(s, note.id, { version: 1 }, { 'if-match': 'nonsense' }),
      400,
      'If-Match must be an entity tag from GET /api/notes/{id}, like "3"',
      'validation_failed',
    );
  });

  test('restore: exactly one of version and version_id; unknown versions 404; other users 404', async () => {
    const { note } = await threeVersions();
    for (const payload of [{}, { version: 1, version_id: MISSING_ID }]) {
      expectInvalidBody(await restore(s, note.id, payload), 'give exactly one of "version" and "version_id"');
    }
    for (const payload of [{ version: 0 }, { version: '1' }, { version_id: 'nope' }, []]) {
      const res = await restore(s, note.id, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    expectVersionNotFound(await restore(s, note.id, { version: 9 }));
    expectVersionNotFound(await restore(s, note.id, { version: 2 ** 31 }));
    expectVersionNotFound(await restore(s, note.id, { version_id: MISSING_ID }));
    expectNoteNotFound(await restore(s, MISSING_ID, { version: 1 }));
    const other = await newSession(ctx.app);
    expectNoteNotFound(await restore(other, note.id, { version: 1 }));
    assert.equal((await api.history(s, note.id)).length, 3);
  });

  test('labels: name, rename and unname a version; trimmed; shown in history and the version', async () => {
    const { note, history } = await threeVersions();
    const first = history[2]!;
    const res = await label(s, note.id, first.id, { label: '  Draft sent to Ana  ' });
    const body = okJson<Version>(res);
    assert.deepEqual(body, {
      id: first.id,
      note_id: note.id,
      title: 'one',
      content: 'first',
      version: 1,
      created_at: first.created_at,
      label: 'Draft sent to Ana',
      restored_from: null,
      author_username: s.username,
      authors: [s.username],
    });
    assert.equal((await api.history(s, note.id))[2]!.label, 'Draft sent to Ana');
    assert.equal(okJson<Version>(await label(s, note.id, first.id, { label: 'Final 🎉' })).label, 'Final 🎉');
    assert.equal(okJson<Version>(await api.version(s, note.id, first.id)).label, 'Final 🎉');
    assert.equal(okJson<Version>(await label(s, note.id, first.id, { label: null })).label, null);
    assert.equal((await api.history(s, note.id))[2]!.label, null);
    // 100 characters (emoji count as one) is the most.
    assert.equal(
      okJson<Version>(await label(s, note.id, first.id, { label: '😀'.repeat(100) })).label,
      '😀'.repeat(100),
    );
  });

  test('labels: empty, too long, control characters, lone surrogates and wrong types are 400', async () => {
    const { note, history } = await threeVersions();
    const id = history[0]!.id;
    const reason = 'label must be null or 1 to 100 characters (trimmed) without control characters';
    for (const bad of ['', '   ', 'x'.repeat(101), 'a\u0000b', 'tab\there', '\ud800']) {
      expectInvalidBody(await label(s, note.id, id, { label: bad }), reason);
    }
    for (const payload of [{}, { label: 5 }, { label: ['a'] }]) {
      assert.equal((await label(s, note.id, id, payload)).statusCode, 400, JSON.stringify(payload));
    }
    assert.equal((await api.history(s, note.id))[0]!.label, null);
  });

  test('labels: unknown version 404 Version not found; missing or foreign note 404 Note not found', async () => {
    const { note, history } = await threeVersions();
    expectVersionNotFound(await label(s, note.id, MISSING_ID, { label: 'x' }));
    expectNoteNotFound(await label(s, MISSING_ID, history[0]!.id, { label: 'x' }));
    const other = await newSession(ctx.app);
    expectNoteNotFound(await label(other, note.id, history[0]!.id, { label: 'mine now' }));
    assert.equal((await api.history(s, note.id))[0]!.label, null);
    // A version of another note of the same owner is not this note's version.
    const second = await api.createOk(s, { title: 'b' });
    expectVersionNotFound(await label(s, second.id, history[0]!.id, { label: 'x' }));
  });

  test('restore of a labelled version: the new version is unnamed, the label stays on the original', async () => {
    const { note, history } = await threeVersions();
    await label(s, note.id, history[1]!.id, { label: 'keep' });
    const res = await restore(s, note.id, { version: 2 });
    assert.equal(res.statusCode, 201, res.body);
    const rows = await api.history(s, note.id);
    assert.deepEqual(
      rows.map((r) => [r.version, r.label, r.restored_from]),
      [
        [4, null, 2],
        [3, null, null],
        [2, 'keep', null],
        [1, null, null],
      ],
    );
  });
});
