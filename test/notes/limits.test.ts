import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectInvalidBody, expectNoContent, expectProblem, notesClient, okJson, type Note } from './support.js';

const MiB = 1024 * 1024;
const TOO_LARGE = `content must be at most ${MiB} bytes (1 MiB) of UTF-8`;
/** Exactly 1 MiB of UTF-8 in characters of 1, 2, 3 and 4 bytes. */
const ONE_MIB_CONTENTS = {
  ascii: 'x'.repeat(MiB),
  'two-byte': 'é'.repeat(MiB / 2),
  'three-byte': `${'€'.repeat((MiB - 1) / 3)}x`,
  emoji: '😀'.repeat(MiB / 4),
};

forEachDatabase('notes input limits and malformed bodies', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;
  let note: Note;

  before(async () => {
    s = await newSession(ctx.app);
    note = await api.createOk(s, { title: 'limits', content: 'start' });
  });

  /** The note is still at this version: refused requests write nothing. */
  const assertVersion = async (version: number) =>
    assert.equal(okJson<Note>(await api.get(s, note.id)).version, version);

  test('title: 200 characters (code points) are accepted, 201 are 400', async () => {
    for (const title of ['t'.repeat(200), '😀'.repeat(200), 'é'.repeat(200)]) {
      const created = await api.createOk(s, { title });
      assert.equal(created.title, title);
      expectNoContent(await api.addVersion(s, note.id, { title, content: '' }));
      assert.equal(okJson<Note>(await api.get(s, note.id)).title, title);
    }
    const version = okJson<Note>(await api.get(s, note.id)).version;
    for (const title of ['t'.repeat(201), '😀'.repeat(201)]) {
      expectInvalidBody(await api.create(s, { title }), 'title must be a string of at most 200 characters');
      expectInvalidBody(
        await api.addVersion(s, note.id, { title, content: '' }),
        'title must be a string of at most 200 characters',
      );
    }
    await assertVersion(version);
  });

  test('content: exactly 1 MiB of UTF-8 is accepted and stored whole', async () => {
    for (const [name, content] of Object.entries(ONE_MIB_CONTENTS)) {
      assert.equal(Buffer.byteLength(content), MiB, name);
      const created = await api.createOk(s, { title: name, content });
      assert.equal(okJson<Note>(await api.get(s, created.id)).content, content, name);
      expectNoContent(await api.addVersion(s, note.id, { title: name, content }));
      const current = okJson<Note>(await api.get(s, note.id));
      assert.equal(current.content, content, name);
      assert.equal(
        okJson<{ content: string }>(await api.version(s, note.id, current.version_id)).content,
        content,
        name,
      );
    }
  });

  test('content: 1 MiB + 1 byte is 413, on create and on a new version', async () => {
    const version = okJson<Note>(await api.get(s, note.id)).version;
    for (const [name, content] of Object.entries(ONE_MIB_CONTENTS)) {
      const over = `${content}x`;
      expectProblem(await api.create(s, { title: name, content: over }), 413, TOO_LARGE, 'content_too_large');
      expectProblem(
        await api.addVersion(s, note.id, { title: name, content: over }),
        413,
        TOO_LARGE,
        'content_too_large',
      );
    }
    // Counted in bytes, not characters: half a MiB of 3-byte characters is over.
    expectProblem(
      await api.addVersion(s, note.id, { title: '', content: '€'.repeat(MiB / 2) }),
      413,
      TOO_LARGE,
      'content_too_large',
    );
    // 1 MiB + 1 of NUL: within the route's body limit once escaped (~6 MiB), still over in content.
    expectProblem(
      await api.addVersion(s, note.id, { title: '', content: '\u0000'.repeat(MiB + 1) }),
      413,
      TOO_LARGE,
      'content_too_large',
    );
    await assertVersion(version);
  });

  test('a body over the route limit is 413 Request body is too large', async () => {
    const huge = { title: 'huge', content: 'x'.repeat(7 * MiB) };
    expectProblem(await api.create(s, huge), 413, 'Request body is too large', 'body_too_large');
    expectProblem(await api.addVersion(s, note.id, huge), 413, 'Request body is too large', 'body_too_large');
  });

  test('wrong types and missing fields are 400 naming the field', async () => {
    const version = okJson<Note>(await api.get(s, note.id)).version;
    const both: Array<[unknown, string]> = [
      [{ title: 5, content: 'x' }, 'title must be a string of at most 200 characters'],
      [{ title: 't', content: null }, 'content must be a string'],
      [{ title: null, content: 'c' }, 'title must be a string of at most 200 characters'],
      [{ title: ['a'], content: 'c' }, 'title must be a string of at most 200 characters'],
      [{ title: 't', content: { text: 'c' } }, 'content must be a string'],
      [{ title: true, content: 'c' }, 'title must be a string of at most 200 characters'],
      [{ title: 't', content: 1 }, 'content must be a string'],
      [[], 'body must be an object'],
      ['a string', 'body must be an object'],
      [null, 'body must be an object'],
      [42, 'body must be an object'],
    ];
    for (const [body, reason] of both) {
      const payload = JSON.stringify(body);
      const json = { 'content-type': 'application/json' };
      expectInvalidBody(await api.create(s, payload, json), reason);
      expectInvalidBody(await api.addVersion(s, note.id, payload, json), reason);
    }
    // Both fields are required on a new version (POST /api/notes has placeholders instead).
    expectInvalidBody(await api.addVersion(s, note.id, { title: 't' }), 'content is required (a string)');
    expectInvalidBody(
      await api.addVersion(s, note.id, { content: 'c' }),
      'title is required (a string of at most 200 characters)',
    );
    expectInvalidBody(await api.addVersion(s, note.id, {}), 'title is required (a string of at most 200 characters)');
    for (const body of [undefined, '']) {
      const res = await api.inject({
        method: 'POST',
        url: `/api/notes/${note.id}/versions`,
        headers: { ...s.auth, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: body }),
      });
      expectInvalidBody(res, 'body must be an object');
    }
    await assertVersion(version);
  });

  test('broken JSON is 400 Invalid request body', async () => {
    const json = { 'content-type': 'application/json' };
    for (const raw of [
      '{"title":',
      '{title: "t", content: "c"}',
      '{"title":"t","content":"c",}',
      "{'title':'t'}",
      'nul',
      '{"title":"t"}}',
    ]) {
      expectProblem(await api.create(s, raw, json), 400, 'Invalid request body', 'invalid_request_body');
      expectProblem(await api.addVersion(s, note.id, raw, json), 400, 'Invalid request body', 'invalid_request_body');
    }
  });

  test('a body that is not JSON is 415', async () => {
    const version = okJson<Note>(await api.get(s, note.id)).version;
    const body = JSON.stringify({ title: 't', content: 'c' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const detail = 'Unsupported content type: send application/json';
      expectProblem(await api.create(s, body, { 'content-type': type }), 415, detail, 'unsupported_media_type');
      expectProblem(
        await api.addVersion(s, note.id, body, { 'content-type': type }),
        415,
        detail,
        'unsupported_media_type',
      );
    }
    await assertVersion(version);
    // A charset parameter is still JSON.
    expectNoContent(await api.addVersion(s, note.id, body, { 'content-type': 'application/json; charset=utf-8' }));
  });

  test('fields other than title and content are ignored', async () => {
    const created = await api.createOk(s, { title: 't', content: 'c', version: 99, owner_id: s.userId, id: note.id });
    assert.notEqual(created.id, note.id);
    assert.equal(created.version, 1);
    expectNoContent(await api.addVersion(s, created.id, { title: 't2', content: 'c2', version: 42 }));
    assert.equal(okJson<Note>(await api.get(s, created.id)).version, 2);
  });
});
