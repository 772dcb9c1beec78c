import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { before, test } from 'node:test';
import { unzipSync, strFromU8 } from 'fflate';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectNoContent, expectProblem, notesClient, okJson, type Note } from '../notes/support.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

interface ExportedVersion {
  version: number;
  title: string;
  content: string;
  created_at: string;
  label: string | null;
  restored_from: number | null;
}
interface ExportedNote {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  versions: ExportedVersion[];
}
interface ExportDocument {
  format: string;
  format_version: number;
  exported_at: string;
  username: string;
  notes: ExportedNote[];
}

forEachDatabase('export and import', (ctx) => {
  const api = notesClient(() => ctx.app);
  const exportJson = (s: Session, query = '') =>
    ctx.app.inject({ method: 'GET', url: `/api/export${query}`, headers: s.auth });
  const importDoc = (s: Session, payload: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(payload),
    });
  const docOf = async (s: Session): Promise<ExportDocument> => {
    const res = await exportJson(s);
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body) as ExportDocument;
  };
  const noteCount = async () =>
    Number(
      (
        await ctx.database.db
          .selectFrom('notes')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const withoutIds = (doc: ExportDocument) => doc.notes.map(({ id: _id, ...rest }) => rest);

  let author: Session;
  let notes: Note[];
  before(async () => {
    author = await newSession(ctx.app, 'author');
    notes = [];
    notes.push(await api.createOk(author, { title: 'First', content: 'one\ntwo' }));
    clock.tick();
    await api.addVersionOk(author, notes[0]!.id, { title: 'First, edited', content: 'one\ntwo\nthree' });
    clock.tick();
    notes.push(
      await api.createOk(author, { title: 'Ünïcode 🎉', content: 'NUL \u0000 and "quotes" and \\ backslash' }),
    );
    clock.tick();
    const trashed = await api.createOk(author, { title: 'Trashed', content: 'not exported' });
    expectNoContent(await api.remove(author, trashed.id));
  });

  test('GET /api/export: the vellum-export document, every version oldest first, trash excluded, as an attachment', async () => {
    const res = await exportJson(author);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.match(
      String(res.headers['content-disposition']),
      new RegExp(`^attachment; filename="vellum-${author.username}-\\d{4}-\\d{2}-\\d{2}\\.json"$`),
    );
    assert.equal(res.headers['cache-control'], 'no-store');
    const doc = JSON.parse(res.body) as ExportDocument;
    assert.deepEqual(Object.keys(doc), [
      'format',
      'format_version',
      'exported_at',
      'username',
      'folders',
      'attachments',
      'notes',
    ]);
    assert.equal(doc.format, 'vellum-export');
    assert.equal(doc.format_version, 2);
    assert.deepEqual((doc as unknown as { folders: string[] }).folders, []);
    assert.equal(doc.username, author.username);
    assert.ok(Math.abs(Date.parse(doc.exported_at) - Date.now()) < 60_000);
    const first = okJson<Note>(await api.get(author, notes[0]!.id));
    const history = await api.history(author, notes[0]!.id);
    assert.deepEqual(doc.notes, [
      {
        id: notes[0]!.id,
        title: 'First, edited',
        created_at: notes[0]!.created_at,
        updated_at: first.updated_at,
        folder: null,
        pinned: false,
        archived: false,
        versions: [
          {
            version: 1,
            title: 'First',
            content: 'one\ntwo',
            created_at: notes[0]!.created_at,
            label: null,
            restored_from: null,
          },
          {
            version: 2,
            title: 'First, edited',
            content: 'one\ntwo\nthree',
            created_at: history[0]!.created_at,
            label: null,
            restored_from: null,
          },
        ],
      },
      {
        id: notes[1]!.id,
        title: 'Ünïcode 🎉',
        created_at: notes[1]!.created_at,
        updated_at: notes[1]!.updated_at,
        folder: null,
        pinned: false,
        archived: false,
        versions: [
          {
            version: 1,
            title: 'Ünïcode 🎉',
            content: 'NUL \u0000 and "quotes" and \\ backslash',
            created_at: notes[1]!.created_at,
            label: null,
            restored_from: null,
          },
        ],
      },
    ]);
    // An account without notes exports an empty list.
    const empty = await newSession(ctx.app);
    assert.deepEqual((await docOf(empty)).notes, []);
  });

  test('round trip: export, import into another account, export again: the same notes, versions and times, new ids', async () => {
    const original = await docOf(author);
    const reader = await newSession(ctx.app, 'reader');
    const res = await importDoc(reader, original);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { notes: 2, versions: 3 });
    const copy = await docOf(reader);
    assert.deepEqual(withoutIds(copy), withoutIds(original));
    const ids = new Set(original.notes.map((n) => n.id));
    for (const note of copy.notes) assert.ok(!ids.has(note.id));
    // The imported notes are ordinary notes: readable, listed, searchable, with their history.
    const listed = okJson<Array<{ id: string; title: string }>>(await api.list(reader));
    assert.deepEqual(listed.map((n) => n.title).sort(), ['First, edited', 'Ünïcode 🎉']);
    const edited = copy.notes.find((n) => n.title === 'First, edited')!;
    const note = okJson<Note>(await api.get(reader, edited.id));
    assert.deepEqual(
      [note.version, note.content, note.created_at, note.updated_at],
      [2, 'one\ntwo\nthree', edited.created_at, edited.updated_at],
    );
    assert.deepEqual(
      (await api.history(reader, edited.id)).map((r) => [r.version, r.title]),
      [
        [2, 'First, edited'],
        [1, 'First'],
      ],
    );
    const found = okJson<Array<{ id: string }>>(
      await ctx.app.inject({ method: 'GET', url: '/api/notes/search?q=three', headers: reader.auth }),
    );
    assert.deepEqual(
      found.map((r) => r.id),
      [edited.id],
    );
    const old = okJson<Array<{ id: string; version: number }>>(
      await ctx.app.inject({ method: 'GET', url: '/api/notes/search?q=first&history=true', headers: reader.auth }),
    );
    assert.deepEqual(
      old.map((r) => [r.id, r.version]),
      [[edited.id, 2]],
    );
    // Importing twice creates a second copy; nothing is merged.
    assert.equal((await importDoc(reader, original)).statusCode, 201);
    assert.equal(okJson<unknown[]>(await api.list(reader)).length, 4);
  });

  test('importing the same export again: existing=ask answers 409 with how many are here and imports nothing; skip leaves them out; copy (the default) adds them again', async () => {
    const original = await docOf(author);
    const reader = await newSession(ctx.app, 'reader');
    const url = (existing: string) => ({ url: `/api/import?existing=${existing}` });
    const importWith = (existing: string, doc: unknown) =>
      ctx.app.inject({
        method: 'POST',
        ...url(existing),
        headers: { ...reader.auth, 'content-type': 'application/json' },
        payload: JSON.stringify(doc),
      });
    // Nothing here yet: ask imports everything, and says none was left out.
    let res = await importWith('ask', original);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { notes: 2, versions: 3, skipped: 0 });

    // A note written since, and one of the two changed since (a new version): those are not repeats.
    const [first, second] = original.notes;
    const added = {
      ...first!,
      title: 'Added later',
      versions: first!.versions.map((v) => ({ ...v, title: 'Added later' })),
    };
    const changed = {
      ...second!,
      versions: [
        ...second!.versions,
        { ...second!.versions.at(-1)!, version: second!.versions.at(-1)!.version + 1, content: 'more' },
      ],
    };
    res = await importWith('ask', original);
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().code, 'import_existing');
    assert.equal(res.json().existing, 2);
    assert.equal(
      res.json().detail,
      '2 notes of this import are already here (imported before); nothing was imported: import again with existing=skip or existing=copy',
    );
    assert.equal(okJson<unknown[]>(await api.list(reader)).length, 2, 'nothing of it stayed');

    res = await importWith('skip', { ...original, notes: [first, added, changed] });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { notes: 2, versions: added.versions.length + changed.versions.length, skipped: 1 });
    const titles = okJson<Array<{ title: string }>>(await api.list(reader))
      .map((n) => n.title)
      .sort();
    assert.deepEqual(
      titles,
      ['Added later', original.notes[0]!.title, original.notes[1]!.title, original.notes[1]!.title].sort(),
    );

    // Two equal notes in one document are both imported (neither repeats a note that was here before).
    const alone = await newSession(ctx.app, 'alone');
    res = await ctx.app.inject({
      method: 'POST',
      url: '/api/import?existing=skip',
      headers: { ...alone.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...original, notes: [first, first] }),
    });
    assert.deepEqual(res.json(), { notes: 2, versions: 2 * first!.versions.length, skipped: 0 });
    // A note in the trash is not "here": importing brings it back as a new note.
    const [gone] = okJson<Array<{ id: string }>>(await api.list(alone));
    assert.equal((await api.remove(alone, gone!.id)).statusCode, 204);
    res = await ctx.app.inject({
      method: 'POST',
      url: '/api/import?existing=ask',
      headers: { ...alone.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...original, notes: [first] }),
    });
    assert.equal(res.statusCode, 409, 'the other copy is still here');
    assert.equal(res.json().existing, 1);

    for (const bad of ['maybe', '', 'SKIP']) assert.equal((await importWith(bad, original)).statusCode, 400, bad);
    // Without the parameter (copy): everything again, and the contract's answer.
    res = await importDoc(reader, original);
    assert.deepEqual(res.json(), { notes: 2, versions: 3 });
  });

  test('import keeps gaps in version numbers (pruned history) and converts times to UTC milliseconds', async () => {
    const s = await newSession(ctx.app);
    const doc = {
      format: 'vellum-export',
      format_version: 1,
      notes: [
        {
          id: 'whatever',
          title: 'Gappy',
          created_at: '2025-01-01T00:00:00Z',
          updated_at: '2025-03-01T10:00:00.5+02:00',
          versions: [
            {
              version: 3,
              title: 'Gappy',
              content: 'three',
              created_at: '2025-02-01T00:00:00.000Z',
              label: null,
              restored_from: null,
            },
            { version: 7, title: 'Gappy', content: 'seven', created_at: '2025-03-01T10:00:00.5+02:00' },
          ],
        },
      ],
    };
    const res = await importDoc(s, doc);
    assert.equal(res.statusCode, 201, res.body);
    const [note] = (await docOf(s)).notes;
    assert.deepEqual(
      note!.versions.map((v) => [v.version, v.created_at]),
      [
        [3, '2025-02-01T00:00:00.000Z'],
        [7, '2025-03-01T08:00:00.500Z'],
      ],
    );
    assert.deepEqual([note!.created_at, note!.updated_at], ['2025-01-01T00:00:00.000Z', '2025-03-01T08:00:00.500Z']);
    const history = await api.history(s, note!.id);
    assert.deepEqual(
      history.map((r) => r.version),
      [7, 3],
    );
    // The next save continues from the highest number.
    await api.addVersionOk(s, note!.id, { title: 'Gappy', content: 'eight' });
    assert.equal(okJson<Note>(await api.get(s, note!.id)).version, 8);
  });

  test('a broken document is 400 naming the first problem, and nothing at all is imported', async () => {
    const TIME_RULE =
      'must be an RFC 3339 timestamp from 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, like 2026-01-31T12:00:00.000Z';
    const s = await newSession(ctx.app);
    const version = (n: number, extra: Record<string, unknown> = {}) => ({
      version: n,
      title: 't',
      content: 'c',
      created_at: `2025-01-0${n}T00:00:00.000Z`,
      label: null,
      restored_from: null,
      ...extra,
    });
    const note = (versions: unknown[], extra: Record<string, unknown> = {}) => ({
      id: 'x',
      title: 't',
      created_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-09T00:00:00.000Z',
      versions,
      ...extra,
    });
    const good = note([version(1), version(2)]);
    const doc = (notes: unknown[], extra: Record<string, unknown> = {}) => ({
      format: 'vellum-export',
      format_version: 1,
      notes,
      ...extra,
    });
    const cases: Array<[unknown, string]> = [
      [[], 'the body must be a JSON object (a vellum-export document)'],
      ['text', 'the body must be a JSON object (a vellum-export document)'],
      [doc([], { format: 'other' }), 'format must be "vellum-export"'],
      [doc([], { format_version: 3 }), 'format_version must be 1 or 2'],
      [doc([], { notes: {} }), 'notes must be an array'],
      [doc([good, 'note']), 'notes[1] must be an object'],
      [doc([good, note([version(1)], { title: 5 })]), 'notes[1].title must be a string of at most 200 characters'],
      [
        doc([note([version(1)], { title: 'x'.repeat(201) })]),
        'notes[0].title must be a string of at most 200 characters',
      ],
      [doc([note([version(1)], { created_at: 'yesterday' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '2025-02-30T00:00:00Z' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([version(1)], { created_at: '0000-01-01T00:00:00Z' })]), `notes[0].created_at ${TIME_RULE}`],
      [doc([note([])]), 'notes[0].versions must be a non-empty array'],
      [
        doc([note([version(1), version(1)])]),
        'notes[0].versions[1].version must be greater than 1, the version before it',
      ],
      [
        doc([note([version(2), version(1)])]),
        'notes[0].versions[1].version must be greater than 2, the version before it',
      ],
      [doc([note([version(0)])]), 'notes[0].versions[0].version must be an integer from 1 to 1000000000'],
      [
        doc([note([version(1, { version: 1.5 })])]),
        'notes[0].versions[0].version must be an integer from 1 to 1000000000',
      ],
      [
        doc([note([version(1, { version: '1' })])]),
        'notes[0].versions[0].version must be an integer from 1 to 1000000000',
      ],
      [
        doc([note([version(2), version(3, { created_at: '2025-01-01T12:00:00.000Z' })])]),
        'notes[0].versions[1].created_at must not be before the version before it',
      ],
      [
        doc([note([version(1)], { created_at: '2025-01-02T00:00:00.000Z' })]),
        "notes[0].versions[0].created_at must not be before the note's created_at",
      ],
      [doc([note([version(1, { content: 7 })])]), 'notes[0].versions[0].content must be a string'],
      [
        doc([note([version(1, { content: 'é'.repeat(524_289) })])]),
        'notes[0].versions[0].content must be at most 1048576 bytes (1 MiB) of UTF-8',
      ],
      [
        doc([note([version(1, { title: 'y'.repeat(201) })])]),
        'notes[0].versions[0].title must be a string of at most 200 characters',
      ],
      [
        doc([note([version(1, { label: '   ' })])]),
        'notes[0].versions[0].label must be null or 1 to 100 characters (trimmed) without control characters',
      ],
      [
        doc([note([version(1, { label: 'l'.repeat(101) })])]),
        'notes[0].versions[0].label must be null or 1 to 100 characters (trimmed) without control characters',
      ],
      [
        doc([note([version(1, { restored_from: 1 })])]),
        'notes[0].versions[0].restored_from must be null or an earlier version number',
      ],
      [
        doc([note([version(1), version(2, { restored_from: 'one' })])]),
        'notes[0].versions[1].restored_from must be null or an earlier version number',
      ],
    ];
    const before = await noteCount();
    for (const [payload, detail] of cases) {
      const res = await importDoc(s, payload);
      expectProblem(res, 400, `Invalid import document: ${detail}`, 'invalid_import');
    }
    // A lone surrogate (escaped in the JSON text) is refused too.
    const lone = await ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(doc([good])).replace('"content":"c"', '"content":"\\ud800"'),
    });
    expectProblem(
      lone,
      400,
      'Invalid import document: notes[0].versions[0].content must be valid Unicode (no unpaired surrogates)',
      'invalid_import',
    );
    // Not JSON at all, or not JSON's content type.
    expectProblem(
      await ctx.app.inject({
        method: 'POST',
        url: '/api/import',
        headers: { ...s.auth, 'content-type': 'application/json' },
        payload: '{"format":',
      }),
      400,
      'Invalid request body',
      'invalid_request_body',
    );
    expectProblem(
      await ctx.app.inject({
        method: 'POST',
        url: '/api/import',
        headers: { ...s.auth, 'content-type': 'text/plain' },
        payload: 'x',
      }),
      415,
      'Unsupported content type: send application/json',
      'unsupported_media_type',
    );
    // No body at all, or an empty one: the document is missing (never a 500).
    for (const headers of [s.auth, { ...s.auth, 'content-type': 'application/json' }]) {
      expectProblem(
        await ctx.app.inject({ method: 'POST', url: '/api/import', headers }),
        400,
        'Invalid import document: the body must be a JSON object (a vellum-export document)',
        'invalid_import',
      );
    }
    expectProblem(
      await ctx.app.inject({ method: 'POST', url: '/api/import', payload: doc([good]) }),
      401,
      'Unauthorized',
      'unauthorized',
    );
    assert.equal(await noteCount(), before);
    assert.deepEqual((await docOf(s)).notes, []);
  });

  test('IMPORT_MAX_BYTES: a larger document is 413 and nothing is written', async () => {
    const app = await ctx.rebuild({ IMPORT_MAX_BYTES: '2048' });
    try {
      const s = await newSession(app);
      const big = {
        format: 'vellum-export',
        format_version: 1,
        notes: [
          {
            id: 'x',
            title: 't',
            created_at: '2025-01-01T00:00:00Z',
            updated_at: '2025-01-01T00:00:00Z',
            versions: [
              {
                version: 1,
                title: 't',
                content: 'x'.repeat(3000),
                created_at: '2025-01-01T00:00:00Z',
                label: null,
                restored_from: null,
              },
            ],
          },
        ],
      };
      const before = await noteCount();
      expectProblem(await importDoc(s, big), 413, 'Request body is too large', 'body_too_large');
      assert.equal(await noteCount(), before);
      big.notes[0]!.versions[0]!.content = 'small';
      assert.equal((await importDoc(s, big)).statusCode, 201);
    } finally {
      await ctx.rebuild();
    }
  });

  test('a streamed export of many notes over a real connection: chunked, complete, in order', async () => {
    const s = await newSession(ctx.app);
    const count = 600;
    const doc = {
      format: 'vellum-export',
      format_version: 1,
      notes: Array.from({ length: count }, (_, i) => ({
        id: 'x',
        title: `note ${i}`,
        created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
        updated_at: '2025-06-01T00:00:00Z',
        versions: [1, 2].map((v) => ({
          version: v,
          title: `note ${i}`,
          content: `content ${i}.${v} ${'lorem ipsum '.repeat(20)}`,
          created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i) + v).toISOString(),
          label: null,
          restored_from: null,
        })),
      })),
    };
    assert.equal((await importDoc(s, doc)).statusCode, 201);
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = ctx.app.server.address() as AddressInfo;
      void address;
      const { headers, chunks } = await new Promise<{ headers: http.IncomingHttpHeaders; chunks: Buffer[] }>(
        (resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port, path: '/api/export', headers: s.auth }, (res) => {
              const received: Buffer[] = [];
              res.on('data', (chunk: Buffer) => received.push(chunk));
              res.on('end', () => resolve({ headers: res.headers, chunks: received }));
              res.on('error', reject);
            })
            .on('error', reject);
        },
      );
      assert.equal(headers['transfer-encoding'], 'chunked');
      assert.equal(headers['content-length'], undefined);
      assert.ok(chunks.length > 10, `${chunks.length} chunks`);
      const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportDocument;
      assert.equal(exported.notes.length, count);
      assert.deepEqual(
        exported.notes.map((n) => n.title),
        doc.notes.map((n) => n.title),
      );
      assert.deepEqual(
        exported.notes[599]!.versions.map((v) => v.content),
        doc.notes[599]!.versions.map((v) => v.content),
      );
    } finally {
      await ctx.rebuild();
    }
  });

  test('GET /api/export?format=markdown: a zip of one Markdown file per note, safe unique names, front matter', async () => {
    const s = await newSession(ctx.app);
    const titles = [
      'Plans',
      'plans',
      'a/b\\c:d*e?f"g<h>i|j',
      'CON',
      'con.txt',
      '. dots .',
      '',
      'x'.repeat(150),
      '🎉'.repeat(60),
      'Ünïcode',
    ];
    const created: Note[] = [];
    for (const title of titles) {
      created.push(await api.createOk(s, { title, content: `# ${title}\n\nbody of ${title}` }));
      clock.tick();
    }
    const trashed = await api.createOk(s, { title: 'gone' });
    expectNoContent(await api.remove(s, trashed.id));
    const res = await ctx.app.inject({ method: 'GET', url: '/api/export?format=markdown', headers: s.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/zip');
    assert.match(
      String(res.headers['content-disposition']),
      new RegExp(`^attachment; filename="vellum-${s.username}-\\d{4}-\\d{2}-\\d{2}\\.zip"$`),
    );
    const files = unzipSync(new Uint8Array(res.rawPayload));
    const names = Object.keys(files);
    assert.deepEqual(names.slice(0, 7), [
      'Plans.md',
      'plans (2).md',
      'a_b_c_d_e_f_g_h_i_j.md',
      '_CON.md',
      '_con.txt.md',
      'dots.md',
      'Untitled.md',
    ]);
    // At most 200 bytes of UTF-8 with the extension, never a split character (issue #19).
    assert.equal(names[7], `${'x'.repeat(150)}.md`);
    assert.equal(names[8], `${'🎉'.repeat(49)}.md`);
    assert.equal(names[9], 'Ünïcode.md');
    assert.equal(names.length, titles.length);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what no file name may hold
    for (const name of names) assert.doesNotMatch(name, /[<>:"/\\|?*\u0000-\u001f]/);
    const first = strFromU8(files['Plans.md']!);
    assert.equal(
      first,
      `---\ntitle: "Plans"\nid: ${created[0]!.id}\ncreated_at: ${created[0]!.created_at}\nupdated_at: ${created[0]!.updated_at}\npinned: false\narchived: false\n---\n\n# Plans\n\nbody of Plans`,
    );
    assert.match(strFromU8(files['a_b_c_d_e_f_g_h_i_j.md']!), /^---\ntitle: "a\/b\\\\c:d\*e\?f\\"g<h>i\|j"\n/);
    expectProblem(
      await ctx.app.inject({ method: 'GET', url: '/api/export?format=pdf', headers: s.auth }),
      400,
      'Query parameter "format" must be one of json, markdown, archive',
      'invalid_query',
    );
    expectProblem(await ctx.app.inject({ method: 'GET', url: '/api/export' }), 401, 'Unauthorized', 'unauthorized');
  });
});
