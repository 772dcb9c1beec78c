import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { bearer, claims, forgeToken, unsignedToken } from '../helpers/auth.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import {
  expectNoContent,
  expectNoteNotFound,
  expectProblem,
  expectUnauthorized,
  expectVersionNotFound,
  MISSING_ID,
  notesClient,
  okJson,
  type Note,
} from './support.js';

const BAD_IDS = [
  'not-a-uuid',
  '12345',
  '00000000-0000-4000-8000-00000000000',
  '00000000-0000-4000-8000-0000000000000',
  'g0000000-0000-4000-8000-000000000000',
  '00000000000040008000000000000000',
  '{00000000-0000-4000-8000-000000000000}',
  `urn:uuid:${MISSING_ID}`,
  '%20',
];

forEachDatabase('notes access: authentication, ownership, malformed ids', (ctx) => {
  const api = notesClient(() => ctx.app);
  let owner: Session;
  let stranger: Session;
  let note: Note;
  let versionId: string;

  before(async () => {
    [owner, stranger] = [await newSession(ctx.app, 'owner'), await newSession(ctx.app, 'stranger')];
    note = await api.createOk(owner, { title: 'private', content: 'secret' });
    await api.addVersionOk(owner, note.id, { title: 'private 2', content: 'secret 2' });
    versionId = note.version_id;
  });

  /** Every route with a valid body, for the caller's headers. */
  const everyRoute = (noteId: string, version: string) =>
    [
      { method: 'POST', url: '/api/notes', payload: { title: 't' } },
      { method: 'GET', url: '/api/notes' },
      { method: 'GET', url: `/api/notes/${noteId}` },
      { method: 'DELETE', url: `/api/notes/${noteId}` },
      { method: 'GET', url: `/api/notes/${noteId}/versions` },
      { method: 'POST', url: `/api/notes/${noteId}/versions`, payload: { title: 't', content: 'c' } },
      { method: 'GET', url: `/api/notes/${noteId}/${version}` },
    ] as const;

  test('401 Unauthorized on every route without a token or with a bad one', async () => {
    const headerSets: Array<Record<string, string>> = [
      {},
      { authorization: '' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer not.a.jwt' },
      { authorization: owner.accessToken },
      { authorization: `Basic ${owner.accessToken}` },
      { authorization: `Bearer ${owner.accessToken} extra` },
      bearer(owner.refreshToken),
      bearer(forgeToken(claims(owner.userId), { key: 'another-secret-0123456789abcdefghijklmnop' })),
      bearer(forgeToken(claims(owner.userId, 'access', { exp: Math.floor(Date.now() / 1000) - 60 }))),
      bearer(unsignedToken(claims(owner.userId))),
    ];
    // Malformed ids too: authentication comes before any validation.
    for (const [noteId, version] of [
      [note.id, versionId],
      ['not-a-uuid', 'nope'],
    ] as const) {
      for (const route of everyRoute(noteId, version)) {
        for (const headers of headerSets) {
          const res = await ctx.app.inject({ ...route, headers });
          expectUnauthorized(res);
        }
      }
    }
    // Nothing was created, changed or deleted by those requests.
    const current = okJson<Note>(await api.get(owner, note.id));
    assert.equal(current.version, 2);
    assert.deepEqual(
      okJson<Note[]>(await api.list(owner)).map((n) => n.id),
      [note.id],
    );
  });

  test("another user's note is 404 Note not found on every route, exactly like a missing one", async () => {
    for (const noteId of [note.id, MISSING_ID]) {
      expectNoteNotFound(await api.get(stranger, noteId));
      expectNoteNotFound(await api.remove(stranger, noteId));
      expectNoteNotFound(await api.versions(stranger, noteId));
      expectNoteNotFound(await api.versions(stranger, noteId, '?limit=1&offset=0'));
      expectNoteNotFound(await api.addVersion(stranger, noteId, { title: 'hijack', content: 'x' }));
      expectNoteNotFound(
        await api.addVersion(stranger, noteId, { title: 'hijack', content: 'x' }, { 'if-match': '"2"' }),
      );
      expectNoteNotFound(
        await api.addVersion(stranger, noteId, { title: 'hijack', content: 'x' }, { 'if-match': '*' }),
      );
      expectNoteNotFound(await api.version(stranger, noteId, versionId));
      expectNoteNotFound(await api.version(stranger, noteId, MISSING_ID));
    }
    // The stranger's list and new notes never show the owner's; the owner's note is untouched.
    assert.deepEqual(okJson(await api.list(stranger)), []);
    const own = await api.createOk(stranger, { title: 'mine' });
    assert.equal(own.owner_id, stranger.userId);
    assert.deepEqual(
      okJson<Note[]>(await api.list(stranger)).map((n) => n.id),
      [own.id],
    );
    assert.deepEqual(
      okJson<Note[]>(await api.list(owner)).map((n) => n.id),
      [note.id],
    );
    const current = okJson<Note>(await api.get(owner, note.id));
    assert.deepEqual([current.title, current.content, current.version], ['private 2', 'secret 2', 2]);
    assert.equal((await api.history(owner, note.id)).length, 2);
  });

  test("a version id of another note is 404 Version not found, also when both notes are the caller's", async () => {
    const other = await api.createOk(owner, { title: 'other' });
    expectVersionNotFound(await api.version(owner, other.id, versionId));
    expectVersionNotFound(await api.version(owner, note.id, other.version_id));
    expectVersionNotFound(await api.version(owner, note.id, MISSING_ID));
    // The stranger's own note with the owner's version id: still nothing.
    const theirs = await api.createOk(stranger, { title: 'theirs' });
    expectVersionNotFound(await api.version(stranger, theirs.id, versionId));
    assert.equal((await api.version(owner, note.id, versionId)).statusCode, 200);
    expectNoContent(await api.remove(owner, other.id));
  });

  test('a malformed note id is 400 Invalid note ID on every route that takes one', async () => {
    for (const bad of BAD_IDS) {
      const invalid = (res: Awaited<ReturnType<typeof api.get>>) =>
        expectProblem(res, 400, 'Invalid note ID', 'invalid_note_id');
      invalid(await api.get(owner, bad));
      invalid(await api.remove(owner, bad));
      invalid(await api.versions(owner, bad));
      invalid(await api.addVersion(owner, bad, { title: 't', content: 'c' }));
      invalid(await api.version(owner, bad, versionId));
      invalid(await api.version(owner, bad, 'also-bad'));
    }
  });

  test('a malformed version id is 400 Invalid version ID', async () => {
    for (const bad of BAD_IDS) {
      expectProblem(await api.version(owner, note.id, bad), 400, 'Invalid version ID', 'invalid_version_id');
      expectProblem(await api.version(stranger, note.id, bad), 400, 'Invalid version ID', 'invalid_version_id');
    }
  });
});
