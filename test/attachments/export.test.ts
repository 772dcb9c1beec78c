import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { forEachDatabase, login, signup, uniqueName } from '../helpers/harness.js';
import { notesClient, okJson } from '../notes/support.js';
import { download, PNG, upload } from './support.js';

forEachDatabase('attachments in export and import', (ctx) => {
  const app = () => ctx.app;
  const notes = notesClient(app);
  const newUser = async () => login(app(), (await signup(app(), uniqueName('exp'))).username);

  test('the archive round-trips notes and files into another account, links rewritten; JSON lists the files', async () => {
    const alice = await newUser();
    const bytes = randomBytes(300 * 1024);
    const picture = await upload(app(), alice, PNG, { filename: 'dot.png', type: 'image/png' });
    const data = await upload(app(), alice, bytes, { filename: 'Données 2026.csv', type: 'text/csv' });
    const folder = (
      await app().inject({ method: 'POST', url: '/api/folders', headers: alice.auth, payload: { name: 'Work' } })
    ).json() as { id: string };
    const content = `A dot ![dot](/api/attachments/${picture.id}) and [the data](/api/attachments/${data.id}).`;
    await notes.createOk(alice, { title: 'Report', content, folder_id: folder.id });

    const json = okJson<{ attachments: unknown[] }>(
      await app().inject({ method: 'GET', url: '/api/export', headers: alice.auth }),
    );
    assert.deepEqual(
      json.attachments,
      [picture, data].map(({ id, filename, content_type, size, sha256, created_at }) => ({
        id,
        filename,
        content_type,
        size,
        sha256,
        created_at,
      })),
    );

    const archive = await app().inject({ method: 'GET', url: '/api/export?format=archive', headers: alice.auth });
    assert.equal(archive.statusCode, 200);
    assert.equal(archive.headers['content-type'], 'application/zip');
    const entries = unzipSync(new Uint8Array(archive.rawPayload));
    assert.deepEqual(
      Object.keys(entries).sort(),
      [`attachments/${data.id}`, `attachments/${picture.id}`, 'vellum-export.json'].sort(),
    );
    assert.ok(Buffer.from(entries[`attachments/${data.id}`]!).equals(bytes));

    const bob = await newUser();
    const imported = await app().inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...bob.auth, 'content-type': 'application/zip' },
      payload: archive.rawPayload,
    });
    assert.equal(imported.statusCode, 201, imported.body);
    assert.deepEqual(imported.json(), { notes: 1, versions: 1 });
    const files = okJson<
      Array<{ id: string; filename: string; content_type: string; references: number; sha256: string }>
    >(await app().inject({ method: 'GET', url: '/api/attachments', headers: bob.auth }));
    assert.deepEqual(files.map((f) => [f.filename, f.content_type, f.references, f.sha256]).sort(), [
      ['Données 2026.csv', 'text/csv', 1, data.sha256],
      ['dot.png', 'image/png', 1, picture.sha256],
    ]);
    for (const file of files) assert.ok(![picture.id, data.id].includes(file.id), 'new ids');
    const [row] = okJson<Array<{ id: string }>>(
      await app().inject({ method: 'GET', url: '/api/notes', headers: bob.auth }),
    );
    const note = okJson<{ content: string; folder_id: string }>(
      await app().inject({ method: 'GET', url: `/api/notes/${row!.id}`, headers: bob.auth }),
    );
    const byName = Object.fromEntries(files.map((f) => [f.filename, f.id]));
    assert.equal(
      note.content,
      `A dot ![dot](/api/attachments/${byName['dot.png']}) and [the data](/api/attachments/${byName['Données 2026.csv']}).`,
    );
    assert.ok((await download(app(), bob, byName['Données 2026.csv']!)).rawPayload.equals(bytes));
    // Alice's files stay hers alone.
    assert.equal((await download(app(), bob, picture.id)).statusCode, 404);

    // A broken archive: 400, and nothing stays behind.
    const carol = await newUser();
    const broken = await app().inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...carol.auth, 'content-type': 'application/zip' },
      payload: Buffer.from('not a zip'),
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().detail, 'Invalid archive: not a zip file');
    // A real archive with a damaged file inside: 400 naming it, and the files stored before it are gone.
    const damaged = Buffer.from(archive.rawPayload);
    const at = damaged.indexOf(Buffer.from('vellum-export.json')) + 'vellum-export.json'.length + 40;
    damaged.fill(0xff, at, at + 64);
    const refused = await app().inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...carol.auth, 'content-type': 'application/zip' },
      payload: damaged,
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().detail, /^Invalid archive: /);
    assert.deepEqual((await app().inject({ method: 'GET', url: '/api/attachments', headers: carol.auth })).json(), []);
    assert.deepEqual((await app().inject({ method: 'GET', url: '/api/notes', headers: carol.auth })).json(), []);
  });

  // Review of #37: the ids were rewritten by one alternation of every file's id, run over the whole
  // document on the event loop. Now each UUID-shaped run is looked up; this pins what it rewrites.
  test('archive import rewrites each file id in any case, wherever it starts, and keeps unknown UUIDs', async () => {
    const alice = await newUser();
    const first = await upload(app(), alice, PNG, { filename: 'a.png', type: 'image/png' });
    const second = await upload(app(), alice, PNG, { filename: 'b.png', type: 'image/png' });
    await notes.createOk(alice, { title: 'Links', content: 'placeholder' });
    const entries = unzipSync(
      new Uint8Array(
        (await app().inject({ method: 'GET', url: '/api/export?format=archive', headers: alice.auth })).rawPayload,
      ),
    );
    const unknown = randomUUID();
    // A UUID-shaped run that is no file's id, with `second`'s id starting 32 characters into it.
    const run = `11111111-2222-3333-4444-55556666${second.id}`;
    const content = (padding: number) =>
      `${first.id.toUpperCase()} ${unknown} ${run} ${'x'.repeat(padding)}${second.id}.`;
    const documentWith = (padding: number) => {
      const document = JSON.parse(Buffer.from(entries['vellum-export.json']!).toString('utf8')) as {
        notes: Array<{ content: string; versions: Array<{ content: string }> }>;
      };
      for (const note of document.notes) {
        note.content = content(padding);
        for (const version of note.versions) version.content = content(padding);
      }
      return JSON.stringify(document);
    };
    // Padded so that the last id starts 10 bytes before the rewrite's 256 KiB slice ends and runs across it.
    const unpadded = documentWith(0);
    const padding = 256 * 1024 - 10 - unpadded.indexOf(`${second.id}.`);
    const padded = documentWith(padding);
    assert.equal(padded.indexOf(`${second.id}.`), 256 * 1024 - 10);
    const archive = Buffer.from(zipSync({ ...entries, 'vellum-export.json': strToU8(padded) }));

    const bob = await newUser();
    const imported = await app().inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...bob.auth, 'content-type': 'application/zip' },
      payload: archive,
    });
    assert.equal(imported.statusCode, 201, imported.body);
    const files = okJson<Array<{ id: string; filename: string }>>(
      await app().inject({ method: 'GET', url: '/api/attachments', headers: bob.auth }),
    );
    const byName = Object.fromEntries(files.map((f) => [f.filename, f.id]));
    const [row] = okJson<Array<{ id: string }>>(
      await app().inject({ method: 'GET', url: '/api/notes', headers: bob.auth }),
    );
    const note = okJson<{ content: string }>(
      await app().inject({ method: 'GET', url: `/api/notes/${row!.id}`, headers: bob.auth }),
    );
    const b = byName['b.png']!;
    assert.equal(
      note.content,
      `${byName['a.png']} ${unknown} 11111111-2222-3333-4444-55556666${b} ${'x'.repeat(padding)}${b}.`,
    );
  });

  test("the Markdown zip carries the files, linked by relative paths from each note's folder", async () => {
    const alice = await newUser();
    const picture = await upload(app(), alice, PNG, { filename: 'dot.png', type: 'image/png' });
    const top = (
      await app().inject({ method: 'POST', url: '/api/folders', headers: alice.auth, payload: { name: 'Work' } })
    ).json() as { id: string };
    const sub = (
      await app().inject({
        method: 'POST',
        url: '/api/folders',
        headers: alice.auth,
        payload: { name: 'Plans', parent_id: top.id },
      })
    ).json() as { id: string };
    await notes.createOk(alice, {
      title: 'Deep',
      content: `![dot](/api/attachments/${picture.id})`,
      folder_id: sub.id,
    });
    await notes.createOk(alice, {
      title: 'Shallow',
      content: `![dot](http://localhost:8080/api/attachments/${picture.id})`,
    });
    const zip = await app().inject({ method: 'GET', url: '/api/export?format=markdown', headers: alice.auth });
    const entries = unzipSync(new Uint8Array(zip.rawPayload));
    const name = `attachments/${picture.id}-dot.png`;
    assert.ok(Buffer.from(entries[name]!).equals(PNG));
    assert.match(
      Buffer.from(entries['Work/Plans/Deep.md']!).toString(),
      new RegExp(`!\\[dot\\]\\(\\.\\./\\.\\./${name}\\)`),
    );
    assert.match(Buffer.from(entries['Shallow.md']!).toString(), new RegExp(`!\\[dot\\]\\(${name}\\)`));
  });
});
