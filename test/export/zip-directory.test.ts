import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { forEachDatabase, login, signup, uniqueName } from '../helpers/harness.js';
import { racedApp } from '../helpers/pause.js';
import { okJson } from '../notes/support.js';
import { reachingIntoDirectory, withAliases } from './zip-bombs.js';

/**
 * Issue #37, finding 4: a zip's central directory is checked whole before anything is inflated
 * (entries that share bytes, or declare more than the import's limits, are 400 and nothing is
 * stored), and every zip import waits its turn in the import queue.
 */
forEachDatabase('zip directory checks', (ctx) => {
  const raced = racedApp(ctx);
  const app = () => raced.app;
  const newUser = async () => login(app(), (await signup(app(), uniqueName('zd'))).username);
  const importZip = (auth: Record<string, string>, zip: Uint8Array) =>
    app().inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...auth, 'content-type': 'application/zip' },
      payload: Buffer.from(zip),
    });
  const nothingStays = async (auth: Record<string, string>) => {
    assert.deepEqual(okJson<unknown[]>(await app().inject({ method: 'GET', url: '/api/notes', headers: auth })), []);
    assert.deepEqual(
      okJson<unknown[]>(await app().inject({ method: 'GET', url: '/api/attachments', headers: auth })),
      [],
    );
    assert.deepEqual(okJson<unknown[]>(await app().inject({ method: 'GET', url: '/api/folders', headers: auth })), []);
  };
  const document = (folders: string[] = []) =>
    strToU8(
      JSON.stringify({
        format: 'vellum-export',
        format_version: 2,
        folders,
        notes: [
          {
            title: 't',
            created_at: '2024-01-01T00:00:00.000Z',
            updated_at: '2024-01-01T00:00:00.000Z',
            versions: [{ version: 1, title: 't', content: 'c', created_at: '2024-01-01T00:00:00.000Z' }],
          },
        ],
      }),
    );

  test('an archive whose directory points 8 entries at one deflated block is 400 before any is inflated; nothing stays', async () => {
    const u = await newUser();
    const first = `attachments/${randomUUID()}`;
    const base = zipSync(
      { 'vellum-export.json': document(['Work']), [first]: new Uint8Array(4 * 1024 * 1024) },
      { level: 9 },
    );
    const bomb = withAliases(
      base,
      first,
      Array.from({ length: 7 }, () => `attachments/${randomUUID()}`),
    );
    assert.ok(bomb.length < 16 * 1024, `the zip is ${bomb.length} bytes`);
    const res = await importZip(u.auth, bomb);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.match(
      res.json().detail,
      /^Invalid archive: entries "attachments\/[0-9a-f-]+" and "attachments\/[0-9a-f-]+" overlap; a zip's entries must not share bytes$/,
    );
    await nothingStays(u.auth);
  });

  test('a Markdown zip with two notes on one block, or an entry reaching into the directory, is 400; nothing stays', async () => {
    const u = await newUser();
    const base = zipSync({ 'Work/a.md': strToU8('text '.repeat(1000)) });
    const aliased = await importZip(u.auth, withAliases(base, 'Work/a.md', ['Work/b.md']));
    assert.equal(aliased.statusCode, 400, aliased.body);
    assert.equal(
      aliased.json().detail,
      'Invalid archive: entries "Work/a.md" and "Work/b.md" overlap; a zip\'s entries must not share bytes',
    );
    const stored = zipSync({ 'a.md': strToU8('first'), 'b.md': strToU8('second note') }, { level: 0 });
    const reaching = await importZip(u.auth, reachingIntoDirectory(stored, 'b.md', 10));
    assert.equal(reaching.statusCode, 400, reaching.body);
    assert.equal(reaching.json().detail, 'Invalid archive: entry "b.md" overlaps the zip\'s central directory');
    await nothingStays(u.auth);
  });

  test('declared sizes past the limits are 400 before anything is inflated: files together, one file, one note; nothing stays', async () => {
    const small = await ctx.rebuild({
      IMPORT_MAX_BYTES: String(1024 * 1024),
      ATTACHMENT_MAX_BYTES: String(600 * 1024),
    });
    const u = await login(small, (await signup(small, uniqueName('zd'))).username);
    const importZip = (auth: Record<string, string>, zip: Uint8Array) =>
      small.inject({
        method: 'POST',
        url: '/api/import',
        headers: { ...auth, 'content-type': 'application/zip' },
        payload: Buffer.from(zip),
      });
    // Three files of 400 KiB: each within ATTACHMENT_MAX_BYTES, together past IMPORT_MAX_BYTES (1 MiB).
    const files = Object.fromEntries(
      Array.from({ length: 3 }, (_, i) => [`attachments/${randomUUID()}`, new Uint8Array(400 * 1024).fill(i + 1)]),
    );
    const archive = await importZip(u.auth, zipSync({ 'vellum-export.json': document(), ...files }, { level: 9 }));
    assert.equal(archive.statusCode, 400, archive.body);
    assert.equal(
      archive.json().detail,
      'Invalid archive: its files declare more than 1048576 bytes in all; at most IMPORT_MAX_BYTES are imported at once',
    );
    const big = `attachments/${randomUUID()}-big.bin`;
    const one = await importZip(
      u.auth,
      zipSync({ 'a.md': strToU8('x'), [big]: new Uint8Array(700 * 1024) }, { level: 9 }),
    );
    assert.equal(one.statusCode, 400, one.body);
    assert.equal(
      one.json().detail,
      `Invalid archive: "${big}" declares 716800 bytes; a file may hold at most 614400 (ATTACHMENT_MAX_BYTES)`,
    );
    const page = strToU8('a'.repeat(400 * 1024));
    const notes = await importZip(u.auth, zipSync({ '1.md': page, '2.md': page, '3.md': page }, { level: 9 }));
    assert.equal(notes.statusCode, 400, notes.body);
    assert.equal(
      notes.json().detail,
      'Invalid archive: its text (the document or its .md files) declares more than 1048576 bytes in all (IMPORT_MAX_BYTES)',
    );
    for (const list of ['notes', 'attachments', 'folders']) {
      assert.deepEqual(
        okJson<unknown[]>(await small.inject({ method: 'GET', url: `/api/${list}`, headers: u.auth })),
        [],
      );
    }
    await ctx.rebuild();
  });

  test("an entry that inflates past its declared size is refused (yauzl's own check stays on); nothing stays", async () => {
    const u = await newUser();
    const zip = Buffer.from(zipSync({ 'a.md': strToU8('a'.repeat(10_000)) }));
    // Declared 100 bytes in both headers: the inflated 10,000 are more than the entry claims.
    const central = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(100, central + 24);
    zip.writeUInt32LE(100, 22);
    const res = await importZip(u.auth, zip);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().detail, 'Invalid archive: a.md is damaged');
    await nothingStays(u.auth);
  });

  test('an entry whose bytes do not match its CRC-32 is refused, whichever it is; nothing stays', async () => {
    const u = await newUser();
    const file = `attachments/${randomUUID()}`;
    const archives: Array<[string, Record<string, Uint8Array>, string]> = [
      ['vellum-export.json', { 'vellum-export.json': document() }, '"format"'],
      [file, { 'vellum-export.json': document(), [file]: strToU8('attachment bytes') }, 'attachment bytes'],
      ['a.md', { 'a.md': strToU8('# A note\n\nwords') }, 'words'],
    ];
    for (const [name, entries, text] of archives) {
      // Stored, not deflated: one changed byte inflates without complaint, and only the checksum can tell.
      const zip = Buffer.from(zipSync(entries, { level: 0 }));
      const at = zip.indexOf(Buffer.from(text));
      assert.ok(at > 0, text);
      zip.writeUInt8(zip.readUInt8(at + 1) ^ 0x01, at + 1);
      const res = await importZip(u.auth, zip);
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      assert.equal(res.json().detail, `Invalid archive: ${name} is damaged (its checksum does not match)`);
      await nothingStays(u.auth);
    }
  });

  test('zip imports share the one-at-a-time import queue: while one runs two wait, a third is 503, the waiting ones then run', {
    timeout: 30_000,
  }, async () => {
    const u = await newUser();
    const zip = () =>
      Buffer.from(zipSync({ 'vellum-export.json': document(), [`attachments/${randomUUID()}`]: randomBytes(64) }));
    const held = raced.pause.arm('import:slot');
    const first = importZip(u.auth, zip());
    await held.reached;
    // A large JSON document (past the inline limit, so it queues) and two zips: two wait, the last to come is 503.
    const large = Buffer.from(
      JSON.stringify({
        format: 'vellum-export',
        format_version: 2,
        notes: [
          {
            title: 'big',
            created_at: '2024-01-01T00:00:00.000Z',
            updated_at: '2024-01-01T00:00:00.000Z',
            versions: [
              { version: 1, title: 'big', content: 'x'.repeat(300 * 1024), created_at: '2024-01-01T00:00:00.000Z' },
            ],
          },
        ],
      }),
    );
    const others = [
      app().inject({
        method: 'POST',
        url: '/api/import',
        headers: { ...u.auth, 'content-type': 'application/json' },
        payload: large,
      }),
      importZip(u.auth, zip()),
      importZip(u.auth, zip()),
    ];
    // Nothing can finish while the slot is held, but the one refused: it answers first.
    const refused = await Promise.race(others);
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal(refused.json().code, 'busy');
    held.release();
    const firstAnswer = await first;
    assert.equal(firstAnswer.statusCode, 201, firstAnswer.body);
    const answers = (await Promise.all(others)).map((r) => r.statusCode).sort();
    assert.deepEqual(answers, [201, 201, 503]);
    assert.equal(
      okJson<unknown[]>(await app().inject({ method: 'GET', url: '/api/notes', headers: u.auth })).length,
      3,
    );
  });
});
