import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { notesClient, okJson } from './support.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

type Row = { id: string; title: string; preview: string };

forEachDatabase('notes list previews', (ctx) => {
  const api = notesClient(() => ctx.app);

  test('GET /api/notes: each row has a one-line plain-text preview of its current text', async () => {
    const s = await newSession(ctx.app);
    const cases: Array<[title: string, content: string, preview: string]> = [
      ['Empty', '', ''],
      ['Plain', 'Milk, eggs\n\nand  bread.', 'Milk, eggs and bread.'],
      [
        'Trip',
        '# Trip\n\n- [ ] **Book** the _train_\n- [x] Pack `socks`\n> see [the map](https://example.com/map "Map")',
        'Book the train Pack socks see the map',
      ],
      ['Other heading', '## Day one\nWalk', 'Day one Walk'],
      ['Title line', 'Title line\nand more', 'and more'],
      ['Title words', 'Title words start the text', 'Title words start the text'],
      ['Tags and words', '#work snake_case 2*3 a * b <b>bold</b>', '#work snake_case 2*3 a * b bold'],
      ['Control', 'a\u0000b\tc\r\nd', 'a b c d'],
      ['Replacement', 'ends with \uFFFD', 'ends with \uFFFD'],
    ];
    const ids = new Map<string, string>();
    for (const [title, content] of cases) {
      clock.tick();
      ids.set((await api.createOk(s, { title, content })).id, title);
    }
    const rows = okJson<Row[]>(await api.list(s));
    const byTitle = new Map(rows.map((r) => [r.title, r.preview]));
    for (const [title, , preview] of cases) assert.equal(byTitle.get(title), preview, title);
  });

  test('a long text is cut at 160 characters with an ellipsis, never inside a character; the preview follows the newest version', async () => {
    const s = await newSession(ctx.app);
    // Astral characters are two UTF-16 units each: the cut is by character.
    const note = await api.createOk(s, { title: 'Long', content: '😀'.repeat(200) });
    let [row] = okJson<Row[]>(await api.list(s));
    assert.equal(row!.preview, `${'😀'.repeat(160)}…`);

    // Only the text's first 1,024 bytes are read, here cutting 本 (3 bytes) after two: it is left out, not shown as �.
    await api.addVersionOk(s, note.id, { title: 'Long', content: `${'*'.repeat(1019)}日本語` });
    [row] = okJson<Row[]>(await api.list(s));
    assert.equal(row!.preview, '日');

    // 1 MiB of text: the preview is its start.
    await api.addVersionOk(s, note.id, { title: 'Long', content: `Third version. ${'x'.repeat(1024 * 1024 - 20)}` });
    [row] = okJson<Row[]>(await api.list(s));
    assert.equal(row!.preview, `Third version. ${'x'.repeat(145)}…`);
  });

  test('an unpaged list of 1,100 notes has every preview (their texts are read in slices, never one statement too large)', async () => {
    const s = await newSession(ctx.app);
    const at = '2026-01-01T00:00:00.000Z';
    const notes = Array.from({ length: 1100 }, (_, i) => ({
      title: `N${i}`,
      created_at: at,
      updated_at: at,
      versions: [{ version: 1, title: `N${i}`, content: `text of ${i}`, created_at: at }],
    }));
    const imported = await ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ format: 'vellum-export', format_version: 1, notes }),
    });
    assert.equal(imported.statusCode, 201, imported.body);
    const rows = okJson<Row[]>(await api.list(s));
    assert.equal(rows.length, 1100);
    for (const row of rows) assert.equal(row.preview, `text of ${row.title.slice(1)}`, row.title);
  });
});
