import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { collectGarbage } from '../../src/attachments/attachments.service.js';
import { parseHistoryRetention } from '../../src/config.js';
import { pruneHistory } from '../../src/notes/retention.js';
import { createStorage } from '../../src/attachments/create-storage.js';
import { frozenDate } from '../helpers/clock.js';
import { forEachDatabase, login, signup, uniqueName, type Session, type TestContext } from '../helpers/harness.js';
import { MISSING_ID, notesClient, okJson } from '../notes/support.js';
import { download, PNG, startS3, upload, uploadRaw } from './support.js';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const DAY_MS = 24 * 60 * 60 * 1000;
/** Date moves only on tick(): two writes in one millisecond would list in random order. */
const clock = frozenDate();

/** The same suite on each backend: bytes in the database, and in a real S3-compatible server. */
function suite(ctx: TestContext, env: () => Record<string, string>) {
  let user: Session;
  const app = () => ctx.app;
  const notes = notesClient(app);
  const newUser = async () => login(app(), (await signup(app(), uniqueName('att'))).username);
  before(async () => {
    await ctx.rebuild(env());
    user = await newUser();
  });

  test('byte-exact: binary across chunk boundaries, empty, and the served headers per type', async () => {
    const binary = randomBytes(700 * 1024 + 13);
    const stored = await upload(app(), user, binary, { filename: 'data.bin', type: 'application/x-thing' });
    assert.deepEqual(Object.keys(stored), ['id', 'filename', 'content_type', 'size', 'sha256', 'created_at']);
    assert.deepEqual(
      [stored.filename, stored.content_type, stored.size, stored.sha256],
      ['data.bin', 'application/x-thing', binary.length, sha(binary)],
    );
    const got = await download(app(), user, stored.id);
    assert.equal(got.statusCode, 200);
    assert.ok(got.rawPayload.equals(binary), 'the same bytes back');
    assert.equal(got.headers['content-type'], 'application/octet-stream');
    assert.equal(got.headers['content-disposition'], 'attachment; filename="data.bin"; filename*=UTF-8\'\'data.bin');
    assert.equal(got.headers['x-content-type-options'], 'nosniff');
    assert.equal(got.headers['content-security-policy'], 'sandbox');
    assert.equal(got.headers['cache-control'], 'private, no-cache');
    assert.equal(got.headers.etag, `"${sha(binary)}"`);
    assert.equal(got.headers['accept-ranges'], 'bytes');

    const empty = await upload(app(), user, Buffer.alloc(0), { filename: 'empty.txt', type: 'text/plain' });
    const emptyGot = await download(app(), user, empty.id);
    assert.deepEqual(
      [emptyGot.statusCode, emptyGot.rawPayload.length, emptyGot.headers['content-length']],
      [200, 0, '0'],
    );

    // PNG inline by its bytes; an SVG, HTML, or HTML claiming to be a PNG, as downloads.
    const png = await upload(app(), user, PNG, { filename: 'dot.png', type: 'image/png' });
    const pngGot = await download(app(), user, png.id);
    assert.deepEqual(
      [pngGot.headers['content-type'], pngGot.headers['content-disposition']],
      ['image/png', 'inline; filename="dot.png"; filename*=UTF-8\'\'dot.png'],
    );
    for (const [name, type, bytes] of [
      ['drawing.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
      ['page.html', 'text/html', '<!doctype html><script>alert(1)</script>'],
      ['fake.png', 'image/png', '<html><script>alert(1)</script></html>'],
    ] as const) {
      const created = await upload(app(), user, Buffer.from(bytes), { filename: name, type });
      const res = await download(app(), user, created.id);
      assert.equal(res.headers['content-type'], 'application/octet-stream', name);
      assert.match(String(res.headers['content-disposition']), /^attachment; /, name);
    }
    // A name with quotes, slashes, controls and non-ASCII letters.
    const odd = await upload(app(), user, Buffer.from('x'), {
      filename: 'Résumé\u0007 (v2)\u202e.txt',
      type: 'text/plain',
    });
    assert.equal(odd.filename, 'Résumé (v2).txt');
    assert.equal(
      (await download(app(), user, odd.id)).headers['content-disposition'],
      'attachment; filename="R_sum_ (v2).txt"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%28v2%29.txt',
    );
  });

  test('Range: 206 with Content-Range, suffix and open ranges, 416 past the end; If-None-Match: 304', async () => {
    const bytes = randomBytes(600 * 1024);
    const { id } = await upload(app(), user, bytes);
    const part = async (range: string) => download(app(), user, id, { range });
    const cases: Array<[string, number, number]> = [
      ['bytes=0-9', 0, 9],
      ['bytes=262140-262150', 262140, 262150],
      ['bytes=-5', bytes.length - 5, bytes.length - 1],
      ['bytes=600000-', 600000, bytes.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await part(range);
      assert.equal(res.statusCode, 206, range);
      assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${bytes.length}`);
      assert.ok(res.rawPayload.equals(bytes.subarray(start, end + 1)), range);
    }
    const past = await part(`bytes=${bytes.length}-`);
    assert.equal(past.statusCode, 416);
    assert.equal(past.headers['content-range'], `bytes */${bytes.length}`);
    // Several ranges or another unit: the whole file.
    for (const range of ['bytes=0-1,5-6', 'items=0-1'])
      assert.equal((await part(range)).rawPayload.length, bytes.length);
    const etag = (await download(app(), user, id)).headers.etag as string;
    const cached = await download(app(), user, id, { 'if-none-match': etag });
    assert.deepEqual([cached.statusCode, cached.rawPayload.length], [304, 0]);
  });

  test("identical bytes are stored once and counted once; another user's file is 404", async () => {
    const owner = await newUser();
    const bytes = randomBytes(5000);
    const a = await upload(app(), owner, bytes, { filename: 'a.bin' });
    clock.tick(); // listed newest first: b after a, not in the same millisecond
    const b = await upload(app(), owner, bytes, { filename: 'b.bin' });
    assert.notEqual(a.id, b.id);
    assert.equal(a.sha256, b.sha256);
    const usage = await app().inject({ method: 'GET', url: '/api/attachments/usage', headers: owner.auth });
    assert.deepEqual(usage.json(), { used_bytes: 5000, quota_bytes: 1024 * 1024 * 1024 });
    const blobs = await ctx.database.db
      .selectFrom('attachment_blobs')
      .select('storage_key')
      .where('owner_id', '=', owner.userId)
      .execute();
    assert.equal(blobs.length, 1);
    const list = okJson<Array<{ id: string; references: number }>>(
      await app().inject({ method: 'GET', url: '/api/attachments', headers: owner.auth }),
    );
    assert.deepEqual(
      list.map((row) => [row.id, row.references]),
      [
        [b.id, 0],
        [a.id, 0],
      ],
    );

    const stranger = await newUser();
    for (const id of [a.id, MISSING_ID]) {
      const res = await download(app(), stranger, id);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().detail, 'Attachment not found');
      assert.equal(
        (await app().inject({ method: 'DELETE', url: `/api/attachments/${id}`, headers: stranger.auth })).statusCode,
        404,
      );
    }
    assert.deepEqual(
      (await app().inject({ method: 'GET', url: '/api/attachments', headers: stranger.auth })).json(),
      [],
    );
    // Deleting one keeps the shared bytes for the other.
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/attachments/${a.id}`, headers: owner.auth })).statusCode,
      204,
    );
    assert.ok((await download(app(), owner, b.id)).rawPayload.equals(bytes));
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/attachments/${b.id}`, headers: owner.auth })).statusCode,
      204,
    );
    assert.equal(
      (
        await ctx.database.db
          .selectFrom('attachment_blobs')
          .select('storage_key')
          .where('owner_id', '=', owner.userId)
          .execute()
      ).length,
      0,
    );
  });

  test('references: a version linking to a file keeps it (409) until every such version is gone', async () => {
    const owner = await newUser();
    const file = await upload(app(), owner, PNG, { filename: 'dot.png', type: 'image/png' });
    const other = await upload(app(), owner, Buffer.from('unrelated'));
    const refs = async () => {
      const list = okJson<Array<{ id: string; references: number }>>(
        await app().inject({ method: 'GET', url: '/api/attachments', headers: owner.auth }),
      );
      return Object.fromEntries(list.map((row) => [row.id, row.references]));
    };
    const del = (id: string) => app().inject({ method: 'DELETE', url: `/api/attachments/${id}`, headers: owner.auth });
    const note = await notes.createOk(owner, {
      title: 'with a picture',
      content: `Look: ![dot](/api/attachments/${file.id.toUpperCase()}) and [again](http://localhost/api/attachments/${file.id})`,
    });
    assert.deepEqual(await refs(), { [file.id]: 1, [other.id]: 0 });
    const refused = await del(file.id);
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'attachment_referenced');
    // The link leaves the current text; version 1 still has it.
    await notes.addVersionOk(owner, note.id, { title: 'with a picture', content: 'no picture now' });
    assert.equal((await del(file.id)).statusCode, 409);
    // Restoring version 1 makes a third version with the link again.
    assert.equal(
      (
        await app().inject({
          method: 'POST',
          url: `/api/notes/${note.id}/restore`,
          headers: { ...owner.auth, 'if-match': '"2"' },
          payload: { version: 1 },
        })
      ).statusCode,
      201,
    );
    assert.deepEqual(await refs(), { [file.id]: 2, [other.id]: 0 });
    // Trash keeps the references; deleting for good releases them.
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/notes/${note.id}`, headers: owner.auth })).statusCode,
      204,
    );
    assert.equal((await del(file.id)).statusCode, 409);
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/trash/${note.id}`, headers: owner.auth })).statusCode,
      204,
    );
    assert.deepEqual(await refs(), { [file.id]: 0, [other.id]: 0 });
    assert.equal((await del(file.id)).statusCode, 204);
    // Another user's file id in my text records nothing.
    const stranger = await newUser();
    const theirs = await upload(app(), stranger, Buffer.from('theirs'));
    await notes.createOk(owner, { title: 'x', content: `![](/api/attachments/${theirs.id})` });
    assert.equal(
      (await app().inject({ method: 'DELETE', url: `/api/attachments/${theirs.id}`, headers: stranger.auth }))
        .statusCode,
      204,
    );
  });

  test('history retention releases the links of the versions it prunes; the current version keeps its file', async () => {
    const owner = await newUser();
    const old = await upload(app(), owner, Buffer.from('only in version 1'));
    const kept = await upload(app(), owner, Buffer.from('in the current version'));
    const note = await notes.createOk(owner, { title: 'r', content: `[old](/api/attachments/${old.id})` });
    await notes.addVersionOk(owner, note.id, { title: 'r', content: 'in between' });
    await notes.addVersionOk(owner, note.id, { title: 'r', content: `[kept](/api/attachments/${kept.id})` });
    const del = (id: string) => app().inject({ method: 'DELETE', url: `/api/attachments/${id}`, headers: owner.auth });
    assert.equal((await del(old.id)).statusCode, 409);
    // Keep only what is younger than a day, seen from two days on: versions 1 and 2 go.
    await pruneHistory(ctx.database.db, new Date(Date.now() + 2 * DAY_MS), parseHistoryRetention('all=1d'));
    assert.equal((await del(kept.id)).statusCode, 409);
    assert.equal((await del(old.id)).statusCode, 204);
  });

  test('deleting an account takes its files, also those its notes link to', async () => {
    const owner = await newUser();
    const file = await upload(app(), owner, PNG, { filename: 'dot.png', type: 'image/png' });
    await notes.createOk(owner, { title: 'p', content: `![dot](/api/attachments/${file.id})` });
    const res = await app().inject({
      method: 'DELETE',
      url: '/api/auth/owner',
      headers: owner.auth,
      payload: { password: owner.password },
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(
      (await ctx.database.db.selectFrom('attachments').select('id').where('owner_id', '=', owner.userId).execute())
        .length,
      0,
    );
    assert.equal(
      (
        await ctx.database.db
          .selectFrom('attachment_blobs')
          .select('sha256')
          .where('owner_id', '=', owner.userId)
          .execute()
      ).length,
      0,
    );
  });

  test('the periodic job deletes files no version linked to within 24 hours, and their bytes', async () => {
    const owner = await newUser();
    const kept = await upload(app(), owner, Buffer.from('linked'));
    const dropped = await upload(app(), owner, Buffer.from('never linked'));
    await notes.createOk(owner, { title: 'x', content: `[file](/api/attachments/${kept.id})` });
    const storage = createStorage(ctx.config, ctx.database.db);
    const soon = await collectGarbage(ctx.database.db, storage, new Date(Date.now() + DAY_MS - 60_000));
    assert.equal((await download(app(), owner, dropped.id)).statusCode, 200, `not yet: ${JSON.stringify(soon)}`);
    await collectGarbage(ctx.database.db, storage, new Date(Date.now() + DAY_MS + 60_000));
    assert.equal((await download(app(), owner, dropped.id)).statusCode, 404);
    assert.ok((await download(app(), owner, kept.id)).rawPayload.equals(Buffer.from('linked')));
    if (ctx.config.attachmentStorage.kind === 'database') {
      const chunks = await ctx.database.db
        .selectFrom('attachment_chunks as c')
        .innerJoin('attachment_blobs as b', 'b.storage_key', 'c.storage_key')
        .select('c.seq')
        .where('b.owner_id', '=', owner.userId)
        .execute();
      assert.equal(chunks.length, 1, "only the kept file's bytes remain");
    }
  });

  test('limits: exactly at the limit stored, one byte over 413; the quota; a wrong body 400 or 415', async () => {
    await ctx.rebuild({ ...env(), ATTACHMENT_MAX_BYTES: '300000', STORAGE_QUOTA_BYTES: '500000' });
    try {
      const owner = await newUser();
      assert.equal((await upload(app(), owner, randomBytes(300000))).size, 300000);
      const over = await uploadRaw(app(), owner, randomBytes(300001));
      assert.equal(over.statusCode, 413);
      assert.equal(over.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(over.json().detail, 'The file is larger than the 300000 bytes limit for one file');
      // 300,000 used of 500,000: a new 250,000 does not fit, the same bytes again do (counted once).
      const quota = await uploadRaw(app(), owner, randomBytes(250000));
      assert.equal(quota.statusCode, 413);
      assert.equal(quota.json().code, 'quota_exceeded');
      assert.match(quota.json().detail, /^Not enough storage left: 300000 bytes of 500000 bytes used/);
      assert.equal((await upload(app(), owner, randomBytes(150000))).size, 150000);
      const usage = await app().inject({ method: 'GET', url: '/api/attachments/usage', headers: owner.auth });
      assert.deepEqual(usage.json(), { used_bytes: 450000, quota_bytes: 500000 });
      // Nothing left behind by the refused uploads.
      const pending = await ctx.database.db
        .selectFrom('attachment_blobs')
        .select('sha256')
        .where('owner_id', '=', owner.userId)
        .where('sha256', 'like', 'pending:%')
        .execute();
      assert.deepEqual(pending, []);

      assert.equal((await uploadRaw(app(), owner, Buffer.from('x'), { field: 'other' })).statusCode, 400);
      const json = await app().inject({
        method: 'POST',
        url: '/api/attachments',
        headers: owner.auth,
        payload: { file: 'x' },
      });
      assert.equal(json.statusCode, 415);
      assert.equal(
        (await app().inject({ method: 'POST', url: '/api/attachments', payload: { file: 'x' } })).statusCode,
        401,
      );
    } finally {
      await ctx.rebuild(env());
    }
  });

  test("a file over the limit gets a readable 413 in Node's fetch while it is still being sent", async () => {
    await ctx.rebuild({ ...env(), ATTACHMENT_MAX_BYTES: '1000000' });
    try {
      const owner = await newUser();
      await app().listen({ port: 0, host: '127.0.0.1' });
      const { port } = app().server.address() as AddressInfo;
      const form = new FormData();
      form.append('file', new Blob([randomBytes(8 * 1024 * 1024)]), 'big.bin');
      const res = await fetch(`http://127.0.0.1:${port}/api/attachments`, {
        method: 'POST',
        headers: owner.auth,
        body: form,
      });
      assert.equal(res.status, 413);
      assert.equal(
        ((await res.json()) as { detail: string }).detail,
        'The file is larger than the 1000000 bytes limit for one file',
      );
    } finally {
      await ctx.rebuild(env());
    }
  });
}

forEachDatabase('attachments (database storage)', (ctx) => suite(ctx, () => ({})));

forEachDatabase('attachments (S3 storage, s3rver)', (ctx) => {
  let s3: Awaited<ReturnType<typeof startS3>>;
  before(async () => {
    s3 = await startS3();
  });
  after(async () => s3?.close());
  suite(ctx, () => s3.env);
});
