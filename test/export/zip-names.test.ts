import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unzipSync } from 'fflate';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { insertNotes, zipDirectory } from './support.js';

/**
 * Issue #19, finding 8: zip names were capped at 100 UTF-16 units, so 100 × 日 made a 303-byte name
 * that unzip refuses ("File name too long"), and format and C1 control characters passed through.
 */
forEachDatabase('Markdown export: file names', (ctx) => {
  test('at most 200 UTF-8 bytes with the suffix, whole code points, no format or C1 control characters, unique ignoring case', async () => {
    const s = await newSession(ctx.app, 'names');
    const titles = [
      '日'.repeat(100),
      '日'.repeat(100),
      'gpj.\u202eevil.exe',
      'a\u200bb\u0085c\u009fd\u2028e\ufefff\u200dg',
      '😀'.repeat(60),
      'x'.repeat(196) + '日',
      'Same',
      'SAME',
      'same (2)',
      '\u202e\u200b',
    ];
    const base = Date.UTC(2025, 0, 1);
    await insertNotes(
      ctx.database.db,
      s.userId,
      titles.map((title, i) => {
        const at = new Date(base + i * 1000).toISOString();
        return { title, content: title, created_at: at, updated_at: at };
      }),
    );
    const res = await ctx.app.inject({ method: 'GET', url: '/api/export?format=markdown', headers: s.auth });
    assert.equal(res.statusCode, 200, res.body);
    const names = zipDirectory(res.rawPayload).map((entry) => entry.name);
    assert.deepEqual(names, [
      `${'日'.repeat(65)}.md`, // 195 + 3 bytes: a 66th would make 201
      `${'日'.repeat(64)} (2).md`, // the suffix takes its room from the title: 192 + 7 bytes
      'gpj.evil.exe.md',
      'ab_c_d efg.md', // format characters (U+200B, U+FEFF, U+200D) go; C1 controls (U+0085, U+009F) become "_"
      `${'😀'.repeat(49)}.md`, // 196 + 3 bytes, never half an emoji
      `${'x'.repeat(196)}.md`, // 日 would not fit whole
      'Same.md',
      'SAME (2).md',
      'same (2) (2).md', // "same (2).md" is taken (ignoring case) by the note before
      'Untitled.md',
    ]);
    for (const entry of zipDirectory(res.rawPayload)) {
      assert.ok(entry.nameBytes.length <= 200, `${entry.nameBytes.length} bytes: ${entry.name}`);
      assert.doesNotMatch(entry.name, /[\p{Cc}\p{Cf}<>:"/\\|?*]/u);
    }
    assert.equal(Buffer.byteLength(names[0]!), 198);
    assert.equal(Buffer.byteLength(names[1]!), 199);
    assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length);
    // Every name extracts: the archive holds one file per note under exactly these names.
    assert.deepEqual(Object.keys(unzipSync(new Uint8Array(res.rawPayload))), names);
  });
});
