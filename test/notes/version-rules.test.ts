import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LABEL_PATTERN, VERSION_MAX } from '../../src/notes/version-rules.js';
import { buildOpenApiDocument } from '../../src/openapi-dump.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { expectInvalidBody, expectProblem, notesClient, okJson, type Note } from './support.js';

/**
 * Issue #19, findings 6 and 11: one label rule for PATCH and import, a clean 409 instead of a 500
 * (PostgreSQL) or a number past 32 bits (SQLite) at the highest version number, and version ids in
 * the restore body normalised like ids in the path.
 */

const LABEL_RULE = 'label must be null or 1 to 100 characters (trimmed) without control characters';
const VERSION_LIMIT =
  'The note has reached the highest version number (2147483647) and takes no more versions; copy it into a new note to keep editing';

/** The label rule in words (CONTRACT.md), as the oracle for LABEL_PATTERN: trimmed, 1 to 100 code points, no control characters, well-formed. */
function acceptedLabel(value: string): boolean {
  const trimmed = value.trim();
  return trimmed.length > 0 && [...trimmed].length <= 100 && trimmed.isWellFormed() && !/\p{Cc}/u.test(trimmed);
}

test("the label pattern (the schema's, and so the document's) accepts exactly the labels the rule describes", async () => {
  const pattern = new RegExp(LABEL_PATTERN, 'u'); // how Ajv compiles a JSON Schema pattern
  const samples = [
    'ok',
    ' Release 1 ',
    '\tx\n',
    'a b',
    '😀'.repeat(100),
    '😀'.repeat(101),
    'x'.repeat(100),
    'x'.repeat(101),
    '',
    '  ',
    'nul\u0000',
    '\u0000',
    'a\u0085b',
    'a\u009fb',
    'a\u007fb',
    'a\tb',
    '\ud800',
    'a\udc00b',
    ' \u00a0x\u3000 ',
    '\ufeffx',
    'x\u2028',
  ];
  for (const label of samples) assert.equal(pattern.test(label), acceptedLabel(label), JSON.stringify(label));
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 110 }), (label) => pattern.test(label) === acceptedLabel(label)),
    { numRuns: 2000 },
  );

  const doc = (await buildOpenApiDocument()) as {
    paths: Record<
      string,
      Record<
        string,
        {
          requestBody: {
            content: Record<string, { schema: { properties: { label: { anyOf: Array<Record<string, unknown>> } } } }>;
          };
        }
      >
    >;
  };
  const label =
    doc.paths['/api/notes/{noteID}/{versionID}']!.patch!.requestBody.content['application/json']!.schema.properties
      .label;
  assert.equal(label.anyOf[0]!.pattern, LABEL_PATTERN);
  assert.deepEqual(label.anyOf[1], { type: 'null' });
});

forEachDatabase('version rules', (ctx) => {
  const api = notesClient(() => ctx.app);

  test('PATCH refuses a label with control characters in the words import uses; trims and counts code points', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 't', content: 'c' });
    const patch = (label: unknown) =>
      api.inject({
        method: 'PATCH',
        url: `/api/notes/${note.id}/${note.version_id}`,
        headers: s.auth,
        payload: { label },
      });
    for (const label of [
      'nul\u0000inside',
      '\u0000',
      'bell\u0007',
      'tab\tinside',
      'del\u007f',
      'next line \u0085',
      'c1 \u009f',
      'x'.repeat(101),
      '   ',
      'x'.repeat(5000),
    ]) {
      expectInvalidBody(await patch(label), LABEL_RULE);
    }
    const lone = await api.inject({
      method: 'PATCH',
      url: `/api/notes/${note.id}/${note.version_id}`,
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: '{"label":"\\udc00 x"}',
    });
    expectInvalidBody(lone, LABEL_RULE);
    assert.equal(okJson<{ label: string }>(await patch('\t Release 1 \n')).label, 'Release 1');
    assert.equal(okJson<{ label: string }>(await patch('😀'.repeat(100))).label, '😀'.repeat(100));
    assert.equal(okJson<{ label: null }>(await patch(null)).label, null);
  });

  test('a note at the highest version number: saving and restoring are 409 version_limit, the same on both databases', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 't', content: 'one' });
    // No route makes a note this old (import stops at 10^9): set it up directly.
    await ctx.database.db
      .updateTable('note_versions')
      .set({ version: VERSION_MAX })
      .where('id', '=', note.version_id)
      .execute();
    await ctx.database.db.updateTable('notes').set({ version: VERSION_MAX }).where('id', '=', note.id).execute();

    expectProblem(
      await api.addVersion(s, note.id, { title: 't', content: 'two' }),
      409,
      VERSION_LIMIT,
      'version_limit',
    );
    expectProblem(
      await api.addVersion(s, note.id, { title: 't', content: 'two' }, { 'if-match': `"${VERSION_MAX}"` }),
      409,
      VERSION_LIMIT,
      'version_limit',
    );
    const restore = (payload: unknown) =>
      api.inject({ method: 'POST', url: `/api/notes/${note.id}/restore`, headers: s.auth, payload: payload as string });
    expectProblem(await restore({ version: VERSION_MAX }), 409, VERSION_LIMIT, 'version_limit');
    expectProblem(await restore({ version_id: note.version_id }), 409, VERSION_LIMIT, 'version_limit');

    const current = okJson<Note>(await api.get(s, note.id));
    assert.deepEqual([current.version, current.version_id, current.content], [VERSION_MAX, note.version_id, 'one']);
    assert.deepEqual(
      (await api.history(s, note.id)).map((r) => r.version),
      [VERSION_MAX],
    );
  });

  test('restore: a version_id in upper case names the same version, as in the path; other spellings are 400', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'first', content: 'one' });
    await api.addVersionOk(s, note.id, { title: 'second', content: 'two' });
    const restore = (versionId: string) =>
      api.inject({
        method: 'POST',
        url: `/api/notes/${note.id.toUpperCase()}/restore`,
        headers: s.auth,
        payload: { version_id: versionId },
      });

    const res = await restore(note.version_id.toUpperCase());
    assert.equal(res.statusCode, 201, res.body);
    const restored = res.json() as Note;
    assert.deepEqual([restored.version, restored.title, restored.content], [3, 'first', 'one']);
    assert.equal(res.headers.location, `/api/notes/${note.id}/${restored.version_id}`);
    assert.equal((await api.history(s, note.id))[0]!.restored_from, 1);

    for (const spelling of [
      `{${note.version_id}}`,
      `urn:uuid:${note.version_id}`,
      note.version_id.replaceAll('-', ''),
    ]) {
      expectInvalidBody(await restore(spelling), 'version_id must be a UUID');
    }
  });
});
