import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectProblem, notesClient, okJson, type Note } from '../notes/support.js';

/**
 * Issue #19, findings 1, 3 and 6 on import: times every part of the system carries, version numbers
 * with room to grow within PostgreSQL's integer, the label rule PATCH applies, and counts that keep
 * a document's parse bounded in memory (read on a worker thread above 256 KiB).
 */

const TIME_RULE =
  'must be an RFC 3339 timestamp from 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, like 2026-01-31T12:00:00.000Z';
const LABEL_RULE = 'must be null or 1 to 100 characters (trimmed) without control characters';

const version = (n: number, extra: Record<string, unknown> = {}) => ({
  version: n,
  title: 't',
  content: 'c',
  created_at: '2025-01-02T00:00:00.000Z',
  label: null,
  restored_from: null,
  ...extra,
});
const note = <V>(versions: V[], extra: Record<string, unknown> = {}) => ({
  id: 'x',
  title: 't',
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-02T00:00:00.000Z',
  versions,
  ...extra,
});
const doc = (notes: unknown[], extra: Record<string, unknown> = {}) => ({
  format: 'vellum-export',
  format_version: 1,
  exported_at: '2026-01-01T00:00:00.000Z',
  username: 'x',
  notes,
  ...extra,
});

/** A JSON text with `count` copies of `item` where `@` stands in `shape`. */
const repeated = (shape: string, item: string, count: number) => shape.replace('@', Array(count).fill(item).join(','));

forEachDatabase('import limits', (ctx) => {
  const api = notesClient(() => ctx.app);
  const send = (s: Session, payload: string | Buffer) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload,
    });
  const importDoc = (s: Session, document: unknown) => send(s, JSON.stringify(document));
  const expectInvalid = (res: Awaited<ReturnType<typeof send>>, detail: string) =>
    expectProblem(res, 400, `Invalid import document: ${detail}`, 'invalid_import');
  const noteCount = async () =>
    Number(
      (
        await ctx.database.db
          .selectFrom('notes')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const onlyNote = async (s: Session) => {
    const rows = okJson<Array<{ id: string }>>(await api.list(s));
    assert.equal(rows.length, 1);
    return okJson<Note>(await api.get(s, rows[0]!.id));
  };

  test('times: 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, after conversion to UTC; outside is 400 naming the field', async () => {
    const s = await newSession(ctx.app);
    const cases: Array<[unknown, string]> = [
      [doc([note([version(1)], { created_at: '1969-12-31T23:59:59.999Z' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '1970-01-01T00:30:00+01:00' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { updated_at: '0001-01-01T00:00:00Z' })]), `notes[0].updated_at ${TIME_RULE}`],
      [
        doc([note([version(1, { created_at: '9999-12-31T23:59:59.999-00:01' })])]),
        `notes[0].versions[0].created_at ${TIME_RULE}`,
      ],
      [
        doc([note([version(1), version(2, { created_at: '1960-01-01T00:00:00Z' })])]),
        `notes[0].versions[1].created_at ${TIME_RULE}`,
      ],
      // The schema's pattern: on the first and last day only Z or a zero offset; no space for T,
      // no leap second, at most 9 fraction digits, an offset with its colon.
      [doc([note([version(1)], { created_at: '1970-01-01T23:00:00+01:00' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '2025-01-01 00:00:00Z' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '2016-12-31T23:59:60Z' })]), `notes[0].created_at ${TIME_RULE}`],
      [
        doc([note([version(1)], { created_at: '2025-01-01T00:00:00.1234567890Z' })]),
        `notes[0].created_at ${TIME_RULE}`,
      ],
      [doc([note([version(1)], { created_at: '2025-01-01T00:00:00+0100' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '2024-02-30T00:00:00Z' })]), `notes[0].created_at ${TIME_RULE}`],
    ];
    for (const [payload, detail] of cases) expectInvalid(await importDoc(s, payload), detail);
    assert.deepEqual(okJson(await api.list(s)), []);

    const edges = doc([
      note(
        [
          version(1, { created_at: '1970-01-01t00:00:00-00:00' }),
          version(2, { created_at: '9999-12-31T23:59:59.999z' }),
        ],
        { created_at: '1970-01-01T00:00:00.000Z', updated_at: '9999-12-31T23:59:59.999Z' },
      ),
    ]);
    const res = await importDoc(s, edges);
    assert.equal(res.statusCode, 201, res.body);
    const imported = await onlyNote(s);
    assert.deepEqual(
      [imported.created_at, imported.updated_at],
      ['1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'],
    );
  });

  test('version numbers: 1 to 1,000,000,000; a note imported at the top still takes saves and restores', async () => {
    const s = await newSession(ctx.app);
    const rule = 'must be an integer from 1 to 1000000000';
    for (const n of [2_147_483_647, 1_000_000_001, 2 ** 53]) {
      expectInvalid(await importDoc(s, doc([note([version(1), version(n)])])), `notes[0].versions[1].version ${rule}`);
    }
    assert.deepEqual(okJson(await api.list(s)), []);

    assert.equal(
      (await importDoc(s, doc([note([version(999_999_999), version(1_000_000_000, { restored_from: 999_999_999 })])])))
        .statusCode,
      201,
    );
    const imported = await onlyNote(s);
    assert.equal(imported.version, 1_000_000_000);
    await api.addVersionOk(s, imported.id, { title: 'next', content: 'saved' });
    const restore = await api.inject({
      method: 'POST',
      url: `/api/notes/${imported.id}/restore`,
      headers: s.auth,
      payload: { version: 999_999_999 },
    });
    assert.equal(restore.statusCode, 201, restore.body);
    assert.equal((restore.json() as Note).version, 1_000_000_002);
    const history = await api.history(s, imported.id);
    assert.deepEqual(
      history.map((r) => [r.version, r.restored_from]),
      [
        [1_000_000_002, 999_999_999],
        [1_000_000_001, null],
        [1_000_000_000, 999_999_999],
        [999_999_999, null],
      ],
    );
  });

  test('labels: the rule PATCH applies, in the same words (NUL, C0, DEL and C1 controls, unpaired surrogates, length)', async () => {
    const s = await newSession(ctx.app);
    const refused = [
      'nul\u0000inside',
      '\u0000',
      'bell\u0007',
      'tab\tinside',
      'line\nbreak',
      'del\u007f',
      'next line \u0085',
      'c1 \u009f',
      'x'.repeat(101),
      '日'.repeat(101),
      '   ',
      '',
    ];
    for (const label of refused) {
      expectInvalid(
        await importDoc(s, doc([note([version(1, { label })])])),
        `notes[0].versions[0].label ${LABEL_RULE}`,
      );
    }
    expectInvalid(
      await importDoc(s, doc([note([version(1, { label: 5 })])])),
      `notes[0].versions[0].label ${LABEL_RULE}`,
    );
    const lone = JSON.stringify(doc([note([version(1, { label: 'LONE' })])])).replace('"LONE"', '"\\udc00 x"');
    expectInvalid(await send(s, lone), `notes[0].versions[0].label ${LABEL_RULE}`);
    assert.deepEqual(okJson(await api.list(s)), []);

    // Trimmed (line breaks and tabs around it too); 100 characters counted as code points.
    const accepted = [
      ['\t Release 1 \n', 'Release 1'],
      ['😀'.repeat(100), '😀'.repeat(100)],
      ['日'.repeat(100), '日'.repeat(100)],
    ];
    const res = await importDoc(s, doc([note(accepted.map(([label], k) => version(k + 1, { label })))]));
    assert.equal(res.statusCode, 201, res.body);
    const history = await api.history(s, (await onlyNote(s)).id);
    assert.deepEqual(
      history.map((r) => r.label).reverse(),
      accepted.map(([, stored]) => stored),
    );
  });

  test('counts: a document past 100,000 notes, 1,000,000 versions, 10 levels or 10,000 unknown values is 400 before it is parsed', async () => {
    const s = await newSession(ctx.app);
    const before = await noteCount();
    const head = '{"format":"vellum-export","format_version":1,"notes":[@]}';
    // Over 256 KiB: read on the worker thread; below: on the event loop. Both count the same way.
    expectInvalid(await send(s, repeated(head, '{}', 100_001)), 'notes must hold at most 100000 notes');
    expectInvalid(await send(s, repeated(head, '0', 100_001)), 'notes must hold at most 100000 notes');
    // A member name spelled with escapes is the same name.
    expectInvalid(
      await send(s, repeated('{"\\u006eotes":[@]}', '{}', 100_001)),
      'notes must hold at most 100000 notes',
    );
    const versions = repeated(head, repeated('{"versions":[@]}', '{}', 100_000), 10);
    expectInvalid(
      await send(s, versions.replace(']}]}', ',{}]}]}')),
      'the document must hold at most 1000000 versions in all',
    );
    expectInvalid(
      await send(s, `{"notes":[{"versions":[{"title":${'['.repeat(7)}${']'.repeat(7)}}]}]}`),
      'the document must not be nested more than 10 levels deep',
    );
    const other = 'the document must hold at most 10000 values in members the format does not define';
    expectInvalid(await send(s, repeated('{"extra":[@],"notes":[]}', '1', 10_000)), other);
    expectInvalid(await send(s, repeated('{"notes":[{"title":[@]}]}', '"x"', 10_001)), other);
    // Exactly at the limits, the document goes on to validation (which names its first problem).
    expectInvalid(
      await send(s, repeated(head, '{}', 100_000)),
      'notes[0].title is required (a string of at most 200 characters)',
    );
    assert.equal(await noteCount(), before);
  });

  test('a large document (read on the worker thread) imports whole, or names its first problem and writes nothing', async () => {
    const s = await newSession(ctx.app);
    const content = 'lorem ipsum dolor sit amet\n'.repeat(400); // ~10.8 KB: 40 notes make ~430 KB
    const notes = Array.from({ length: 40 }, (_, i) =>
      note(
        [
          version(1, { title: `Note ${i}`, content: `${i} ${content}`, label: i % 2 === 0 ? `label ${i}` : null }),
          version(3, {
            title: `Note ${i}!`,
            content: `${content} ${i}`,
            created_at: '2025-01-03T00:00:00.000Z',
            restored_from: 1,
          }),
        ],
        { title: `Note ${i}!`, updated_at: '2025-01-03T00:00:00.000Z' },
      ),
    );
    const broken = structuredClone(notes);
    (broken[39]!.versions[1] as { label: string | null }).label = 'bad\u0000label';
    const before = await noteCount();
    expectInvalid(await importDoc(s, doc(broken)), `notes[39].versions[1].label ${LABEL_RULE}`);
    const notUtf8 = Buffer.from(JSON.stringify(doc(notes)));
    notUtf8[notUtf8.length - 10] = 0xff;
    expectProblem(await send(s, notUtf8), 400, 'Invalid request body: it is not valid UTF-8', 'validation_failed');
    expectProblem(
      await send(s, JSON.stringify(doc(notes)).slice(0, -1)),
      400,
      'Invalid request body',
      'invalid_request_body',
    );
    assert.equal(await noteCount(), before);

    const res = await importDoc(s, doc(notes));
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { notes: 40, versions: 80 });
    const exported = JSON.parse(
      (await ctx.app.inject({ method: 'GET', url: '/api/export', headers: s.auth })).body,
    ) as { notes: Array<{ id: string }> };
    // Same created_at everywhere: export orders them by their new (random) ids.
    const byTitle = (list: Array<{ id: string; title?: unknown }>) =>
      list.map(({ id: _id, ...rest }) => rest).sort((a, b) => String(a.title).localeCompare(String(b.title)));
    // A version 1 document: every note at the top level, unpinned, not archived.
    const filed = notes.map((note) => ({ ...note, folder: null, pinned: false, archived: false }));
    assert.deepEqual(byTitle(exported.notes), byTitle(filed));
  });
});
