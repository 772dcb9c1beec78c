import assert from 'node:assert/strict';
import { test } from 'node:test';
import { zipSync, strToU8 } from 'fflate';
import { forEachDatabase, login, signup, uniqueName } from '../helpers/harness.js';
import { notesClient, okJson } from '../notes/support.js';
import { download, PNG, upload } from '../attachments/support.js';

interface Row {
  id: string;
  title: string;
  folder_id: string | null;
  created_at?: string;
  updated_at: string;
}
interface Full {
  id: string;
  title: string;
  content: string;
  folder_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Issue #27: what GET /export?format=markdown writes comes back in through POST /import, and so does a single .md file. */
forEachDatabase('Markdown import', (ctx) => {
  const app = () => ctx.app;
  const notes = notesClient(app);
  const newUser = async () => login(app(), (await signup(app(), uniqueName('md'))).username);
  const importAs = (auth: Record<string, string>, type: string, payload: Buffer | string) =>
    app().inject({ method: 'POST', url: '/api/import', headers: { ...auth, 'content-type': type }, payload });
  const everything = async (auth: Record<string, string>) => {
    const rows = okJson<Row[]>(await app().inject({ method: 'GET', url: '/api/notes?limit=100', headers: auth }));
    const full = await Promise.all(
      rows.map(async (r) =>
        okJson<Full>(await app().inject({ method: 'GET', url: `/api/notes/${r.id}`, headers: auth })),
      ),
    );
    const folders = okJson<Array<{ id: string; name: string; parent_id: string | null }>>(
      await app().inject({ method: 'GET', url: '/api/folders', headers: auth }),
    );
    const path = (id: string | null): string | null => {
      if (id === null) return null;
      const f = folders.find((x) => x.id === id)!;
      const up = path(f.parent_id);
      return up === null ? f.name : `${up}/${f.name}`;
    };
    return full
      .map((n) => ({
        title: n.title,
        content: n.content,
        folder: path(n.folder_id),
        created_at: n.created_at,
        updated_at: n.updated_at,
        version: n.version,
      }))
      .sort((a, b) => a.title.localeCompare(b.title));
  };

  test('the Markdown export imports back: titles, text, times, folders, and files with their links', async () => {
    const alice = await newUser();
    const picture = await upload(app(), alice, PNG, { filename: 'dot.png', type: 'image/png' });
    const work = (
      await app().inject({ method: 'POST', url: '/api/folders', headers: alice.auth, payload: { name: 'Work' } })
    ).json() as { id: string };
    const plans = (
      await app().inject({
        method: 'POST',
        url: '/api/folders',
        headers: alice.auth,
        payload: { name: 'Plans', parent_id: work.id },
      })
    ).json() as { id: string };
    await notes.createOk(alice, {
      title: 'Report: "Q3" / draft',
      content: `# Q3\r\n\r\nA dot ![dot](/api/attachments/${picture.id}) #work\n`,
      folder_id: plans.id,
    });
    const second = await notes.createOk(alice, {
      title: 'Top level',
      content: '---\nnot: front matter of ours\n---\ntext',
    });
    await notes.addVersionOk(alice, second.id, { title: 'Top level', content: 'the current text, ünïcödé 🌍' });
    await notes.createOk(alice, { title: '', content: '---\nlooks: like front matter\n---\ntext that is the note' });
    const zip = await app().inject({ method: 'GET', url: '/api/export?format=markdown', headers: alice.auth });
    assert.equal(zip.statusCode, 200);

    const bob = await newUser();
    const imported = await importAs(bob.auth, 'application/zip', zip.rawPayload);
    assert.equal(imported.statusCode, 201, imported.body);
    assert.deepEqual(imported.json(), { notes: 3, versions: 3 });

    const [mine, theirs] = [await everything(alice.auth), await everything(bob.auth)];
    const files = okJson<Array<{ id: string; filename: string; sha256: string; references: number }>>(
      await app().inject({ method: 'GET', url: '/api/attachments', headers: bob.auth }),
    );
    assert.deepEqual(
      files.map((f) => [f.filename, f.sha256, f.references]),
      [['dot.png', picture.sha256, 1]],
    );
    assert.ok((await download(app(), bob, files[0]!.id)).rawPayload.equals(PNG));
    // Each note as it was (its current text as version 1), the file link pointing at Bob's copy.
    assert.deepEqual(
      theirs,
      mine.map((n) => ({ ...n, version: 1, content: n.content.replace(picture.id, files[0]!.id) })),
    );

    // The same zip again: its notes are found to be here already (their front matter's times).
    const again = await app().inject({
      method: 'POST',
      url: '/api/import?existing=ask',
      headers: { ...bob.auth, 'content-type': 'application/zip' },
      payload: zip.rawPayload,
    });
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json().existing, 3);
    const skipped = await app().inject({
      method: 'POST',
      url: '/api/import?existing=skip',
      headers: { ...bob.auth, 'content-type': 'application/zip' },
      payload: zip.rawPayload,
    });
    assert.deepEqual(skipped.json(), { notes: 0, versions: 0, skipped: 3 });
    assert.equal((await everything(bob.auth)).length, 3);
  });

  test('issue #42: the Markdown export imported back into the same account finds its notes of several versions (existing=skip, ask), and keeps pinned and archived', async () => {
    const alice = await newUser();
    const kept = await notes.createOk(alice, { title: 'Three versions', content: 'one' });
    await notes.addVersionOk(alice, kept.id, { title: 'Three versions', content: 'two' });
    await notes.addVersionOk(alice, kept.id, { title: 'Three versions', content: 'three #done' });
    const pinned = await notes.createOk(alice, { title: 'Pinned', content: 'p' });
    const file = (id: string, payload: Record<string, unknown>) =>
      app().inject({ method: 'PATCH', url: `/api/notes/${id}`, headers: alice.auth, payload });
    assert.equal((await file(pinned.id, { pinned: true })).statusCode, 200);
    assert.equal((await file(kept.id, { archived: true })).statusCode, 200);
    const zip = await app().inject({ method: 'GET', url: '/api/export?format=markdown', headers: alice.auth });
    assert.equal(zip.statusCode, 200);
    const withExisting = (existing: string, auth: Record<string, string>) =>
      app().inject({
        method: 'POST',
        url: `/api/import?existing=${existing}`,
        headers: { ...auth, 'content-type': 'application/zip' },
        payload: zip.rawPayload,
      });
    const ask = await withExisting('ask', alice.auth);
    assert.equal(ask.statusCode, 409, ask.body);
    assert.equal(ask.json().code, 'import_existing');
    assert.equal(ask.json().existing, 2);
    const skip = await withExisting('skip', alice.auth);
    assert.equal(skip.statusCode, 201, skip.body);
    assert.deepEqual(skip.json(), { notes: 0, versions: 0, skipped: 2 });
    const listed = async (auth: Record<string, string>, query: string) =>
      okJson<Array<{ title: string; pinned: boolean; archived: boolean }>>(
        await app().inject({ method: 'GET', url: `/api/notes?limit=100${query}`, headers: auth }),
      ).map(({ title, pinned, archived }) => ({ title, pinned, archived }));
    assert.deepEqual(await listed(alice.auth, ''), [{ title: 'Pinned', pinned: true, archived: false }]);
    assert.deepEqual(await listed(alice.auth, '&archived=true'), [
      { title: 'Three versions', pinned: false, archived: true },
    ]);

    // Another account has none of them: all imported, pinned and archived as they were.
    const bob = await newUser();
    assert.deepEqual((await withExisting('skip', bob.auth)).json(), { notes: 2, versions: 2, skipped: 0 });
    assert.deepEqual(await listed(bob.auth, ''), [{ title: 'Pinned', pinned: true, archived: false }]);
    assert.deepEqual(await listed(bob.auth, '&archived=true'), [
      { title: 'Three versions', pinned: false, archived: true },
    ]);
    // A file without an id (another tool's) is here when a note has its title and created_at.
    const note = okJson<Full>(
      await app().inject({ method: 'GET', url: `/api/notes/${pinned.id}`, headers: alice.auth }),
    );
    const md = `---\ntitle: "Pinned"\ncreated_at: ${note.created_at}\n---\n\nother text`;
    const again = await app().inject({
      method: 'POST',
      url: '/api/import?existing=skip',
      headers: { ...alice.auth, 'content-type': 'text/markdown' },
      payload: md,
    });
    assert.deepEqual(again.json(), { notes: 0, versions: 0, skipped: 1 });
  });

  test('issue #42: front matter tags (a YAML list or a comma list) are added to the text as #tags when missing', async () => {
    const u = await newUser();
    const zip = zipSync({
      'Listed.md': strToU8('---\ntitle: Listed\ntags:\n  - travel\n  - "work/plans"\n---\nGo #travel\n'),
      'Inline.md': strToU8('---\ntags: [alpha, beta]\n---\ntext'),
      'Commas.md': strToU8('---\ntags: one, two words\n---\ntext'),
    });
    const res = await importAs(u.auth, 'application/zip', Buffer.from(zip));
    assert.equal(res.statusCode, 201, res.body);
    const got = await everything(u.auth);
    assert.deepEqual(
      got.map(({ title, content }) => ({ title, content })),
      [
        { title: 'Commas', content: 'text\n\n#one #two-words' },
        { title: 'Inline', content: 'text\n\n#alpha #beta' },
        { title: 'Listed', content: 'Go #travel\n\n#work/plans' },
      ],
    );
    const tags = okJson<Array<{ name: string }>>(
      await app().inject({ method: 'GET', url: '/api/tags', headers: u.auth }),
    );
    assert.deepEqual(tags.map((t) => t.name).sort(), [
      'alpha',
      'beta',
      'one',
      'travel',
      'two-words',
      'work',
      'work/plans',
    ]);
  });

  test('a single .md file: front matter read (title, times), else the text as it is', async () => {
    const u = await newUser();
    const withFront =
      '---\ntitle: "Trip: Lyon"\ncreated_at: 2024-03-01T10:00:00.000Z\nupdated_at: 2024-03-02T11:30:00.000Z\n---\n\nPack the **tent**.\n';
    assert.equal((await importAs(u.auth, 'text/markdown', withFront)).statusCode, 201);
    const plain = await importAs(u.auth, 'text/markdown; charset=utf-8', '# Just text\n\nno front matter');
    assert.deepEqual(plain.json(), { notes: 1, versions: 1 });
    const got = await everything(u.auth);
    assert.deepEqual(
      got.map(({ title, content, folder }) => ({ title, content, folder })),
      [
        { title: 'Imported note', content: '# Just text\n\nno front matter', folder: null },
        { title: 'Trip: Lyon', content: 'Pack the **tent**.\n', folder: null },
      ],
    );
    assert.equal(got[1]!.created_at, '2024-03-01T10:00:00.000Z');
    assert.equal(got[1]!.updated_at, '2024-03-02T11:30:00.000Z');
  });

  test('refused whole, naming the problem: a file that is not UTF-8, a zip without Markdown; nothing stays', async () => {
    const u = await newUser();
    const latin1 = zipSync({
      'good.md': strToU8('fine'),
      'Notes/caf\u00e9.md': new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
    });
    const bad = await importAs(u.auth, 'application/zip', Buffer.from(latin1));
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().detail, 'Invalid Markdown import: Notes/café.md is not UTF-8 text');
    const none = await importAs(
      u.auth,
      'application/zip',
      Buffer.from(zipSync({ 'picture.png': new Uint8Array(PNG) })),
    );
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().detail, 'Invalid Markdown import: the zip holds no Markdown (.md) file');
    assert.equal((await importAs(u.auth, 'text/markdown', Buffer.from([0xff, 0xfe, 0x00]))).statusCode, 400);
    assert.deepEqual(await everything(u.auth), []);
  });

  test('a small zip of text that would inflate past IMPORT_MAX_BYTES is 400 from its declared sizes, nothing inflated; nothing stays', async () => {
    await ctx.rebuild({ IMPORT_MAX_BYTES: String(1024 * 1024) });
    const u = await newUser();
    const page = strToU8('a'.repeat(400 * 1024));
    const zip = Buffer.from(zipSync({ '1.md': page, '2.md': page, '3.md': page, '4.md': page }, { level: 9 }));
    assert.ok(zip.length < 20 * 1024, `the zip is ${zip.length} bytes`);
    const res = await importAs(u.auth, 'application/zip', zip);
    // Issue #37: refused from the directory's declared sizes before anything is inflated (it was 413 once 3.md had been).
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().detail,
      'Invalid archive: its text (the document or its .md files) declares more than 1048576 bytes in all (IMPORT_MAX_BYTES)',
    );
    assert.deepEqual(await everything(u.auth), []);
    await ctx.rebuild();
  });
});
