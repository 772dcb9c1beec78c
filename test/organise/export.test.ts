import assert from 'node:assert/strict';
import { test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectProblem, okJson, type Note } from '../notes/support.js';
import { organiseClient } from './support.js';

interface Exported {
  format_version: number;
  folders: string[];
  notes: Array<{ title: string; folder: string | null; pinned: boolean; archived: boolean }>;
}

// The export lists folders and notes oldest first: each create gets its own millisecond.
const clock = frozenDate();

/** Export version 2 and import of folders, pins, the archive and tags. */
forEachDatabase('export and import of a folder tree', (ctx) => {
  const api = organiseClient(() => ctx.app);
  const exportOf = async (s: Session) => JSON.parse((await api.call(s, 'GET', '/api/export')).body) as Exported;
  const importInto = (s: Session, document: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(document),
    });

  async function tree(s: Session) {
    const created = <T>(value: T) => {
      clock.tick();
      return value;
    };
    const work = created(await api.folder(s, 'Work'));
    const plans = created(await api.folder(s, 'Plans', work.id));
    created(await api.folder(s, 'Empty', work.id));
    created(await api.folder(s, 'Home'));
    const a = created(await api.note(s, 'alpha #project/vellum', 'Alpha', plans.id));
    const b = created(await api.note(s, 'beta #home', 'Beta', work.id));
    created(await api.note(s, 'top #home', 'Top'));
    await api.fileOk(s, a.id, { pinned: true });
    await api.fileOk(s, b.id, { archived: true });
  }

  test("GET /api/export: format_version 2, every folder path, each note's folder, pin and archive", async () => {
    const s = await newSession(ctx.app);
    await tree(s);
    const doc = await exportOf(s);
    assert.equal(doc.format_version, 2);
    assert.deepEqual(doc.folders, ['Home', 'Work', 'Work/Empty', 'Work/Plans']);
    assert.deepEqual(
      doc.notes.map((n) => [n.title, n.folder, n.pinned, n.archived]),
      [
        ['Alpha', 'Work/Plans', true, false],
        ['Beta', 'Work', false, true],
        ['Top', null, false, false],
      ],
    );
  });

  test('a round trip into another account recreates the tree, pins, archive and tags; folders already there are reused', async () => {
    const source = await newSession(ctx.app);
    await tree(source);
    const doc = await exportOf(source);
    const target = await newSession(ctx.app);
    const existing = await api.folder(target, 'WORK'); // matched ignoring case, not duplicated
    const res = await importInto(target, doc);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), { notes: 3, versions: 3 });
    const folders = await api.folders(target);
    const byId = new Map(folders.map((f) => [f.id, f]));
    const pathOf = (id: string | null): string | null => {
      if (id === null) return null;
      const f = byId.get(id)!;
      return f.parent_id === null ? f.name : `${pathOf(f.parent_id)}/${f.name}`;
    };
    assert.deepEqual(folders.map((f) => pathOf(f.id)).sort(), ['Home', 'WORK', 'WORK/Empty', 'WORK/Plans']);
    assert.ok(folders.some((f) => f.id === existing.id));
    const all = [...(await api.list(target)), ...(await api.list(target, '?archived=true'))];
    assert.deepEqual(
      all.map((n) => [n.title, pathOf(n.folder_id), n.pinned, n.archived, n.tags]),
      [
        ['Alpha', 'WORK/Plans', true, false, ['project/vellum']],
        ['Top', null, false, false, ['home']],
        ['Beta', 'WORK', false, true, ['home']],
      ],
    );
    assert.deepEqual(await api.tags(target), [
      { name: 'home', count: 2 },
      { name: 'project', count: 1 },
      { name: 'project/vellum', count: 1 },
    ]);
    // The target exports the same tree (its own spelling of Work).
    assert.deepEqual((await exportOf(target)).folders, ['Home', 'WORK', 'WORK/Empty', 'WORK/Plans']);
  });

  test('version 1 documents still import, at the top level; a bad folder path is 400 and nothing is imported', async () => {
    const s = await newSession(ctx.app);
    const version = { version: 1, title: 't', content: 'c #old', created_at: '2025-01-01T00:00:00Z' };
    const note = (extra: Record<string, unknown> = {}) => ({
      title: 't',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
      versions: [version],
      ...extra,
    });
    const v1 = await importInto(s, { format: 'vellum-export', format_version: 1, notes: [note()] });
    assert.equal(v1.statusCode, 201, v1.body);
    assert.deepEqual(
      (await api.list(s)).map((n) => [n.folder_id, n.pinned, n.archived, n.tags]),
      [[null, false, false, ['old']]],
    );
    const rule =
      'must be folder names joined by /, each of which must be 1 to 100 characters (trimmed) without / \\ < > : " | ? * ' +
      'or control characters, not end with a dot, and not be a device name Windows reserves (CON, PRN, AUX, NUL, COM1, LPT1, ...)';
    for (const [document, detail] of [
      [
        { format: 'vellum-export', format_version: 2, notes: [note(), note({ folder: 'Work/a:b' })] },
        `notes[1].folder ${rule.replace('must be', 'must be null or')}`,
      ],
      [
        { format: 'vellum-export', format_version: 2, notes: [note({ folder: 'Work//Plans' })] },
        `notes[0].folder ${rule.replace('must be', 'must be null or')}`,
      ],
      [{ format: 'vellum-export', format_version: 2, folders: ['ok', 'CON'], notes: [] }, `folders[1] ${rule}`],
    ] as const) {
      expectProblem(await importInto(s, document), 400, `Invalid import document: ${detail}`, 'invalid_import');
    }
    expectProblem(
      await importInto(s, { format: 'vellum-export', format_version: 2, notes: [note({ pinned: 'yes' })] }),
      400,
      'Invalid import document: notes[0].pinned must be true or false',
      'invalid_import',
    );
    assert.equal((await api.list(s)).length, 1);
    assert.deepEqual(await api.folders(s), []);
  });

  test("the Markdown zip puts each note in its folder's directory, empty folders included", async () => {
    const s = await newSession(ctx.app);
    await tree(s);
    const x = await api.folder(s, 'x.md'); // a folder named like a file: the file beside it steps aside
    await api.note(s, 'in x', 'x', undefined);
    assert.equal(okJson<Note[]>(await api.call(s, 'GET', `/api/notes?folder=${x.id}`)).length, 0);
    const res = await api.call(s, 'GET', '/api/export?format=markdown');
    assert.equal(res.statusCode, 200);
    const files = unzipSync(new Uint8Array(res.rawPayload));
    assert.deepEqual(Object.keys(files).sort(), [
      'Home/',
      'Top.md',
      'Work/',
      'Work/Beta.md',
      'Work/Empty/',
      'Work/Plans/',
      'Work/Plans/Alpha.md',
      'x (2).md',
      'x.md/',
    ]);
    assert.match(strFromU8(files['Work/Plans/Alpha.md']!), /\n---\n\nalpha #project\/vellum$/);
  });
});
