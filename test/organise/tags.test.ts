import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { expectNoContent, okJson, type Note } from '../notes/support.js';
import { deriveMissingTags } from '../../src/notes/tags-backfill.js';
import { organiseClient } from './support.js';

/** Content → the note's tags: the grammar of CONTRACT.md "Folders, tags, pins, archive". */
const GRAMMAR: Array<[string, string[]]> = [
  ['#Work and #work', ['work']],
  ['#project/vellum', ['project/vellum']],
  ['a#b x#y', []],
  ['#123 #2024 #12ab', ['12ab']],
  ['# Heading\n## Sub #inhead', ['inhead']],
  ['`#code` and ``#also `code` `` #real', ['real']],
  ['```\n#fenced\n```\n#after', ['after']],
  ['~~~~ js\n#x\n~~~\n#still\n~~~~\n#out', ['out']],
  ['```\n#unclosed fence runs to the end', []],
  ['> ```\n> #quoted\n> ```\n#done', ['done']],
  ['#Café #日本語 #naïve. #под_черта #a-b', ['a-b', 'café', 'naïve', 'под_черта', '日本語']],
  [`#${'a'.repeat(64)} #${'b'.repeat(65)}`, ['a'.repeat(64)]],
  ['(#paren) "#quote" #end.', ['end']],
  ['line\n#start\ttab\t#tabbed\u00a0#nbsp', ['nbsp', 'start', 'tabbed']],
  ['#', []],
];

forEachDatabase('tags', (ctx) => {
  const api = organiseClient(() => ctx.app);

  test('tags come from the current content as the grammar says, lower case, sorted', async () => {
    const s = await newSession(ctx.app);
    for (const [content, tags] of GRAMMAR) {
      const note = await api.note(s, content);
      assert.deepEqual(note.tags, tags, JSON.stringify(content));
      assert.deepEqual(
        okJson<Note>(await api.call(s, 'GET', `/api/notes/${note.id}`)).tags,
        tags,
        JSON.stringify(content),
      );
    }
  });

  test('GET /api/tags counts notes (parents too); edits, restores, the trash and deletes keep it right', async () => {
    const s = await newSession(ctx.app);
    const a = await api.note(s, '#work #project/vellum');
    const b = await api.note(s, '#work');
    assert.deepEqual(await api.tags(s), [
      { name: 'project', count: 1 },
      { name: 'project/vellum', count: 1 },
      { name: 'work', count: 2 },
    ]);
    await api.save(s, b.id, 'no tags now');
    assert.deepEqual(await api.tags(s), [
      { name: 'project', count: 1 },
      { name: 'project/vellum', count: 1 },
      { name: 'work', count: 1 },
    ]);
    // Restoring version 1 brings its tags back.
    const restored = await api.call(s, 'POST', `/api/notes/${b.id}/restore`, { version: 1 });
    assert.equal(restored.statusCode, 201, restored.body);
    assert.deepEqual((restored.json() as Note).tags, ['work']);
    assert.deepEqual(
      (await api.tags(s)).find((t) => t.name === 'work'),
      { name: 'work', count: 2 },
    );
    // The trash hides them; a restore from the trash shows them again; a delete for good removes them.
    expectNoContent(await api.call(s, 'DELETE', `/api/notes/${a.id}`));
    assert.deepEqual(await api.tags(s), [{ name: 'work', count: 1 }]);
    assert.equal((await api.call(s, 'POST', `/api/trash/${a.id}/restore`)).statusCode, 200);
    assert.equal((await api.tags(s)).length, 3);
    expectNoContent(await api.call(s, 'DELETE', `/api/notes/${a.id}`));
    expectNoContent(await api.call(s, 'DELETE', `/api/trash/${a.id}`));
    assert.deepEqual(await api.tags(s), [{ name: 'work', count: 1 }]);
    // Archived notes still count.
    await api.fileOk(s, b.id, { archived: true });
    assert.deepEqual(await api.tags(s), [{ name: 'work', count: 1 }]);
  });

  test("GET /api/notes?tag=: own tags and parents, case and a leading # ignored; another user's tags invisible", async () => {
    const s = await newSession(ctx.app);
    const stranger = await newSession(ctx.app);
    const deep = await api.note(s, '#a/b/c');
    const mid = await api.note(s, '#A/B');
    const flat = await api.note(s, '#a');
    await api.note(s, '#ab');
    await api.note(stranger, '#a #secret');
    assert.deepEqual(new Set(await api.ids(s, '?tag=a')), new Set([deep.id, mid.id, flat.id]));
    assert.deepEqual(new Set(await api.ids(s, '?tag=a/b')), new Set([deep.id, mid.id]));
    assert.deepEqual(await api.ids(s, `?tag=${encodeURIComponent('#A/B/C')}`), [deep.id]);
    assert.deepEqual(await api.ids(s, '?tag=secret'), []);
    assert.deepEqual(await api.ids(s, '?tag=b'), []);
    assert.deepEqual(
      (await api.tags(stranger)).map((t) => t.name),
      ['a', 'secret'],
    );
  });

  test('the back-fill derives the tags of notes written before tags existed', async () => {
    const s = await newSession(ctx.app);
    const note = await api.note(s, 'old #legacy/one');
    const trashed = await api.note(s, '#binned');
    expectNoContent(await api.call(s, 'DELETE', `/api/notes/${trashed.id}`));
    const db = ctx.database.db;
    // As the migration leaves them: no tags derived, no rows.
    await db.updateTable('notes').set({ tags: null }).where('id', 'in', [note.id, trashed.id]).execute();
    await db.deleteFrom('note_tags').where('note_id', '=', note.id).execute();
    assert.deepEqual(await api.tags(s), []);
    assert.deepEqual(okJson<Note>(await api.call(s, 'GET', `/api/notes/${note.id}`)).tags, []);
    assert.ok((await deriveMissingTags(db)).notes >= 2);
    assert.deepEqual(okJson<Note>(await api.call(s, 'GET', `/api/notes/${note.id}`)).tags, ['legacy/one']);
    assert.deepEqual(await api.tags(s), [
      { name: 'legacy', count: 1 },
      { name: 'legacy/one', count: 1 },
    ]);
    assert.equal((await deriveMissingTags(db)).notes, 0);
    // The trashed note got its tags, and they come back with it.
    assert.equal((await api.call(s, 'POST', `/api/trash/${trashed.id}/restore`)).statusCode, 200);
    assert.equal((await api.tags(s)).find((t) => t.name === 'binned')?.count, 1);
  });

  test('a note with more than 1,000 distinct tags keeps the first 1,000', async () => {
    const s = await newSession(ctx.app);
    const content = Array.from({ length: 1200 }, (_, i) => `#t${String(i).padStart(4, '0')}`).join(' ');
    const note = await api.note(s, content);
    assert.equal(note.tags.length, 1000);
    assert.equal(note.tags.at(-1), 't0999');
    assert.equal((await api.tags(s)).length, 1000);
  });
});
