import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { zipSync, strToU8 } from 'fflate';
import yazl from 'yazl';
import { forEachDatabase, login, signup, uniqueName } from '../helpers/harness.js';
import { okJson } from '../notes/support.js';

/**
 * A zip of tiny files costs an upload and a row each, whatever its bytes (identical files are
 * stored once): an import takes at most 10,000 files and 120,000 entries, refused before any file
 * is uploaded, naming the limit.
 */
forEachDatabase('zip import limits', (ctx) => {
  const app = () => ctx.app;
  const newUser = async () => login(app(), (await signup(app(), uniqueName('zl'))).username);
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
  };
  const files = (count: number, name: (id: string) => string) =>
    Object.fromEntries(Array.from({ length: count }, () => [name(randomUUID()), strToU8('x')]));
  const document = strToU8(
    JSON.stringify({
      format: 'vellum-export',
      format_version: 2,
      notes: [{ title: 't', versions: [{ title: 't', content: 'c' }] }],
    }),
  );

  test('an archive or a Markdown zip of 10,001 files is 400 before any is uploaded', async () => {
    const u = await newUser();
    const archive = await importZip(
      u.auth,
      zipSync({ 'vellum-export.json': document, ...files(10_001, (id) => `attachments/${id}`) }),
    );
    assert.equal(archive.statusCode, 400);
    assert.equal(archive.json().detail, 'Invalid archive: it holds 10001 files; at most 10000 are imported at once');
    const markdown = await importZip(
      u.auth,
      zipSync({ 'a.md': strToU8('text'), ...files(10_001, (id) => `attachments/${id}-dot.txt`) }),
    );
    assert.equal(markdown.statusCode, 400);
    assert.equal(markdown.json().detail, 'Invalid archive: it holds 10001 files; at most 10000 are imported at once');
    await nothingStays(u.auth);
  });

  test("a zip of 120,002 entries is 400 from its directory's end record alone", async () => {
    const u = await newUser();
    // Two entries, in ZIP64 form; then its directory's end record claims 120,002 (as a zip of that
    // many would: past 65,535 only the ZIP64 record can say it). Nothing past that record is read.
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from('text'), 'a.md');
    zip.addBuffer(Buffer.alloc(0), 'd/0');
    zip.end({ forceZip64Format: true, comment: '' });
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const record = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06]));
    assert.equal(bytes.readBigUInt64LE(record + 32), 2n);
    bytes.writeBigUInt64LE(120_002n, record + 24);
    bytes.writeBigUInt64LE(120_002n, record + 32);
    const res = await importZip(u.auth, bytes);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().detail, 'Invalid archive: it holds 120002 entries; at most 120000 are imported at once');
    await nothingStays(u.auth);
  });
});
