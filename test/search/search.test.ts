import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectNoContent, expectProblem, notesClient, okJson, type Note, type VersionRow } from '../notes/support.js';
import { highlighted, searchClient } from './support.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

forEachDatabase('search', (ctx) => {
  const api = notesClient(() => ctx.app);
  const find = searchClient(() => ctx.app);
  let s: Session;
  const sorted = (list: string[]) => [...list].sort();

  before(async () => {
    s = await newSession(ctx.app);
    const corpus: Array<[string, string]> = [
      ['Garden plans', 'Plant tomatoes and basil in the spring. Water daily.'],
      ['Reading list', 'The quick brown fox; a novel about gardens and foxes.'],
      ['Recipes', 'Tomato soup: tomatoes, onion, garlic. Blend until smooth.'],
      ['Résumé draft', 'Experience: café manager in Zürich, naïve coöperation.'],
      ['Meeting notes', 'Discussed the brown paper bag test and the quick wins.'],
    ];
    for (const [title, content] of corpus) {
      await api.createOk(s, { title, content });
      clock.tick();
    }
  });

  test('terms: every word must match, in title or content, in any order', async () => {
    assert.deepEqual(sorted(await find.titles(s, 'tomatoes')), ['Garden plans', 'Recipes']);
    assert.deepEqual(await find.titles(s, 'tomatoes basil'), ['Garden plans']);
    assert.deepEqual(await find.titles(s, 'basil tomatoes'), ['Garden plans']);
    assert.deepEqual(await find.titles(s, 'plans water'), ['Garden plans']);
    assert.deepEqual(await find.titles(s, 'tomatoes nowhere'), []);
  });

  test('"a phrase" matches those words in order and adjacent', async () => {
    assert.deepEqual(await find.titles(s, '"quick brown"'), ['Reading list']);
    assert.deepEqual(sorted(await find.titles(s, 'quick brown')), ['Meeting notes', 'Reading list']);
    assert.deepEqual(await find.titles(s, '"brown quick"'), []);
    assert.deepEqual(await find.titles(s, '"brown paper bag"'), ['Meeting notes']);
    // An unterminated quote runs to the end of the query.
    assert.deepEqual(await find.titles(s, '"brown paper'), ['Meeting notes']);
  });

  test('-term excludes; a query of only exclusions lists every other note', async () => {
    assert.deepEqual(await find.titles(s, 'tomatoes -basil'), ['Recipes']);
    assert.deepEqual(await find.titles(s, 'quick -"quick brown"'), ['Meeting notes']);
    assert.deepEqual(sorted(await find.titles(s, '-tomatoes -quick')), ['Résumé draft']);
    // A lone "-" is no operator; it carries no word.
    assert.deepEqual(await find.titles(s, 'basil -'), ['Garden plans']);
  });

  test('term* matches a word prefix, also at the end of a phrase', async () => {
    assert.deepEqual(sorted(await find.titles(s, 'tomat*')), ['Garden plans', 'Recipes']);
    assert.deepEqual(sorted(await find.titles(s, 'fox*')), ['Reading list']);
    assert.deepEqual(await find.titles(s, 'garden*'), ['Garden plans', 'Reading list']);
    assert.deepEqual(await find.titles(s, '"brown pap"*'), ['Meeting notes']);
    assert.deepEqual(await find.titles(s, 'tomat'), []);
  });

  test('case and diacritics are ignored both ways: resume finds Résumé, ZURICH finds Zürich', async () => {
    assert.deepEqual(await find.titles(s, 'resume'), ['Résumé draft']);
    assert.deepEqual(await find.titles(s, 'RÉSUMÉ'), ['Résumé draft']);
    assert.deepEqual(await find.titles(s, 'ZURICH cafe'), ['Résumé draft']);
    assert.deepEqual(await find.titles(s, 'naive cooperation'), ['Résumé draft']);
    assert.deepEqual(await find.titles(s, 'TOMATO'), ['Recipes']);
  });

  test('a match in the title ranks above one in the content', async () => {
    const u = await newSession(ctx.app);
    await api.createOk(u, { title: 'Unrelated', content: 'lighthouse lighthouse lighthouse keeper lighthouse' });
    clock.tick();
    await api.createOk(u, { title: 'Other', content: 'a lighthouse' });
    clock.tick();
    await api.createOk(u, {
      title: 'The lighthouse',
      content: 'nothing else here at all, a long text about the sea and ships',
    });
    clock.tick();
    await api.createOk(u, { title: 'Newest, unrelated', content: 'lighthouse' });
    const titles = await find.titles(u, 'lighthouse');
    assert.equal(titles[0], 'The lighthouse');
    assert.deepEqual(sorted(titles.slice(1)), ['Newest, unrelated', 'Other', 'Unrelated']);
    // Several words: a title holding one of them still ranks first.
    assert.equal((await find.titles(u, 'lighthouse ships'))[0], 'The lighthouse');
  });

  test('snippets are plain text: Markdown syntax is left out, its words kept, highlights on the words', async () => {
    const u = await newSession(ctx.app);
    const content = [
      '# Trip plan',
      '',
      '- [ ] Pack the **tent** and the `stove`, see [the list](https://example.com/packing_list "list").',
      '> Check the ~~old~~ _new_ weather: 2*3 snake_case a * b #camping',
      '![a photo of the lake](/api/attachments/00000000-0000-4000-8000-000000000000)',
    ].join('\n');
    await api.createOk(u, { title: 'Lyon', content });
    const [result] = await find.search(u, 'tent');
    assert.equal(
      result!.snippet,
      'Trip plan Pack the tent and the stove, see the list. Check the old new weather: 2*3 snake_case a * b #camping a photo of the lake',
    );
    assert.deepEqual(result!.highlights, [[19, 23]]);
    assert.equal(result!.snippet.slice(19, 23), 'tent');
    // A word only in a link's target is not shown highlighted (the target is not in the snippet).
    const [byTarget] = await find.search(u, 'packing');
    assert.deepEqual(byTarget!.highlights, []);
  });

  test('result rows: {id, title, updated_at, snippet, highlights} of the current version', async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Trip', content: 'Pack the tent.' });
    await api.addVersionOk(u, note.id, { title: 'Trip to Lyon', content: 'Pack the tent and the stove.' });
    const current = okJson<Note>(await api.get(u, note.id));
    const [result, ...rest] = await find.search(u, 'stove');
    assert.deepEqual(rest, []);
    assert.deepEqual(result, {
      id: note.id,
      title: 'Trip to Lyon',
      updated_at: current.updated_at,
      snippet: 'Pack the tent and the stove.',
      highlights: [[22, 27]],
    });
    // Only the current version counts without history=true.
    assert.deepEqual(await find.search(u, 'tent -stove'), []);
  });

  test('snippets: at most 200 characters of plain text around the best match, offsets in JS string indices', async () => {
    const u = await newSession(ctx.app);
    const filler = 'lorem ipsum dolor sit amet '.repeat(40);
    const content = `${filler}\n\n🦊 The  fox\tjumped over the 🐶 dog, and the fox ran.\u0000 ${filler}`;
    await api.createOk(u, { title: 'Long', content });
    const [result] = await find.search(u, 'fox dog');
    assert.ok(result!.snippet.length <= 200);
    assert.ok(result!.snippet.startsWith('…') && result!.snippet.endsWith('…'), result!.snippet);
    assert.match(result!.snippet, /🦊 The fox jumped over the 🐶 dog, and the fox ran\. lorem/);
    assert.deepEqual(highlighted(result!), ['fox', 'dog', 'fox']);
    // Offsets count UTF-16 code units: the fox after the emoji (2 units) starts 3 after it.
    const foxAt = result!.snippet.indexOf('🦊');
    assert.equal(result!.highlights[0]![0], foxAt + 7);

    // Multi-byte words: highlights cover the original word, accents and all.
    await api.createOk(u, { title: 'Ünïcödé', content: 'Ça va? Très bien — 日本語 テキスト, naïve 😀 café.' });
    const [accented] = await find.search(u, 'tres cafe');
    assert.equal(accented!.snippet, 'Ça va? Très bien — 日本語 テキスト, naïve 😀 café.');
    assert.deepEqual(highlighted(accented!), ['Très', 'café']);
    const [cjk] = await find.search(u, '日本語');
    assert.deepEqual(highlighted(cjk!), ['日本語']);
    // A match only in the title: the title is the snippet.
    const [titled] = await find.search(u, 'unicode');
    assert.deepEqual([titled!.snippet, highlighted(titled!)], ['Ünïcödé', ['Ünïcödé']]);
    // Found for what it lacks: the start of the content, nothing highlighted.
    const lacking = await find.search(u, '-fox');
    assert.deepEqual(
      lacking.map((r) => [r.snippet.slice(0, 6), r.highlights]),
      [['Ça va?', []]],
    );
  });

  test('pagination: limit (default 20, 1 to 100) and offset', async () => {
    const u = await newSession(ctx.app);
    for (let i = 0; i < 23; i += 1) await api.createOk(u, { title: `page note ${i}`, content: 'zebra' });
    const all = await find.search(u, 'zebra', '&limit=100');
    assert.equal(all.length, 23);
    assert.equal((await find.search(u, 'zebra')).length, 20);
    assert.deepEqual(await find.search(u, 'zebra', '&limit=5&offset=20'), all.slice(20));
    assert.deepEqual(await find.search(u, 'zebra', '&offset=23'), []);
    expectProblem(
      await find.raw(u, 'q=zebra&limit=101'),
      400,
      'Query parameter "limit" must be an integer from 1 to 100',
      'invalid_query',
    );
    expectProblem(
      await find.raw(u, 'q=zebra&offset=-1'),
      400,
      'Query parameter "offset" must be an integer 0 or more',
      'invalid_query',
    );
  });

  test('history=true finds text that was since deleted: one row per note, its newest matching version', async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Essay', content: 'The paragraph about narwhals.' });
    await api.addVersionOk(u, note.id, { title: 'Essay', content: 'More narwhals, and walruses.' });
    await api.addVersionOk(u, note.id, { title: 'Essay, final', content: 'Only walruses now.' });
    const other = await api.createOk(u, { title: 'Zoo', content: 'narwhals today' });
    const history = await api.history(u, note.id);

    assert.deepEqual(await find.titles(u, 'narwhals'), ['Zoo']);
    const found = await find.search(u, 'narwhals', '&history=true');
    assert.deepEqual(sorted(found.map((r) => r.id)), sorted([note.id, other.id]));
    const essay = found.find((r) => r.id === note.id)!;
    const v2 = history.find((r: VersionRow) => r.version === 2)!;
    assert.deepEqual(essay, {
      id: note.id,
      title: 'Essay',
      updated_at: history[0]!.created_at,
      snippet: 'More narwhals, and walruses.',
      highlights: [[5, 13]],
      version: 2,
      version_id: v2.id,
    });
    const zoo = found.find((r) => r.id === other.id)!;
    assert.deepEqual([zoo.version, zoo.version_id], [1, other.version_id]);
    // The current version when it matches; history=false (any spelling) leaves the fields out.
    const [walrus] = await find.search(u, 'walruses', '&history=1');
    assert.deepEqual([walrus!.version, walrus!.title], [3, 'Essay, final']);
    assert.deepEqual(await find.titles(u, '"paragraph about"', '&history=True'), ['Essay']);
    assert.deepEqual(await find.titles(u, 'walruses', '&history=false'), ['Essay, final']);
    expectProblem(
      await find.raw(u, 'q=x&history=yes'),
      400,
      'Query parameter "history" must be true or false',
      'invalid_query',
    );
  });

  test("never another user's note", async () => {
    const a = await newSession(ctx.app);
    const b = await newSession(ctx.app);
    await api.createOk(a, { title: 'secret', content: 'platypus' });
    assert.deepEqual(await find.search(b, 'platypus'), []);
    assert.deepEqual(await find.search(b, 'platypus', '&history=true'), []);
    assert.deepEqual(await find.search(b, '-nothing'), []);
    assert.deepEqual(await find.titles(a, 'platypus'), ['secret']);
  });

  test('trashed notes are never found; restored, they are again; purged, gone from the index', async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Wombat', content: 'burrow' });
    expectNoContent(await api.remove(u, note.id));
    for (const q of ['wombat', 'burrow', '-nothing']) {
      assert.deepEqual(await find.search(u, q), [], q);
      assert.deepEqual(await find.search(u, q, '&history=true'), [], q);
    }
    okJson(await ctx.app.inject({ method: 'POST', url: `/api/trash/${note.id}/restore`, headers: u.auth }));
    assert.deepEqual(await find.titles(u, 'burrow'), ['Wombat']);
    expectNoContent(await api.remove(u, note.id));
    expectNoContent(await ctx.app.inject({ method: 'DELETE', url: `/api/trash/${note.id}`, headers: u.auth }));
    assert.equal(await indexRows(), await versionCount());
  });

  test("current search sees exactly each note's current version after saves, restores, imports and the trash", async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Kept', content: 'gecko' });
    await api.addVersionOk(u, note.id, { title: 'Kept', content: 'iguana' });
    const restored = await ctx.app.inject({
      method: 'POST',
      url: `/api/notes/${note.id}/restore`,
      headers: u.auth,
      payload: { version: 1 },
    });
    assert.equal(restored.statusCode, 201, restored.body);
    assert.deepEqual(await find.titles(u, 'gecko'), ['Kept']);
    assert.deepEqual(await find.titles(u, 'iguana'), []);
    assert.deepEqual(await find.titles(u, 'iguana', '&history=true'), ['Kept']);
    const doc = {
      format: 'vellum-export',
      format_version: 1,
      exported_at: '2026-01-03T00:00:00.000Z',
      username: 'x',
      notes: [
        {
          id: note.id,
          title: 'Imported',
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-02T00:00:00.000Z',
          versions: [
            {
              version: 1,
              title: 'Imported',
              content: 'gecko iguana',
              created_at: '2026-01-01T00:00:00.000Z',
              label: null,
              restored_from: null,
            },
            {
              version: 3,
              title: 'Imported',
              content: 'chameleon',
              created_at: '2026-01-02T00:00:00.000Z',
              label: null,
              restored_from: null,
            },
          ],
        },
      ],
    };
    const imported = await ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...u.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(doc),
    });
    assert.equal(imported.statusCode, 201, imported.body);
    assert.deepEqual(await find.titles(u, 'gecko'), ['Kept']);
    assert.deepEqual(await find.titles(u, 'chameleon'), ['Imported']);
    assert.deepEqual(sorted(await find.titles(u, 'gecko', '&history=true')), ['Imported', 'Kept']);
    assert.deepEqual(await find.titles(u, '-nothing'), ['Imported', 'Kept']);
    expectNoContent(await api.remove(u, note.id));
    assert.deepEqual(await find.titles(u, '-nothing'), ['Imported']);
    okJson(await ctx.app.inject({ method: 'POST', url: `/api/trash/${note.id}/restore`, headers: u.auth }));
    assert.deepEqual(await find.titles(u, 'gecko'), ['Kept']);
    if (ctx.kind === 'sqlite') {
      // The marker holds one entry per note outside the trash, and nothing else.
      const { sql } = await import('kysely');
      const { rows } = await sql<{ stray: number }>`
        select (select count(*) from search_current) - (select count(*) from notes where deleted_at is null) as stray`.execute(
        ctx.database.db,
      );
      assert.equal(rows[0]!.stray, 0);
    }
  });

  /** Index entries and versions match one to one (history), and current entries and notes. */
  const indexRows = async () => {
    const table = ctx.kind === 'postgres' ? 'search_history' : 'search_version_keys';
    const { rows } = await (await import('kysely')).sql<{
      n: number | string;
    }>`select count(*) as n from ${(await import('kysely')).sql.table(table)}`.execute(ctx.database.db);
    return Number(rows[0]!.n);
  };
  const versionCount = async () =>
    Number(
      (
        await ctx.database.db
          .selectFrom('note_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('the index follows deletions it is not told about: a pruned version, a deleted account', async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Pruned', content: 'ocelot' });
    await api.addVersionOk(u, note.id, { title: 'Pruned', content: 'lynx' });
    // As history retention does: delete an old version row directly.
    await ctx.database.db.deleteFrom('note_versions').where('id', '=', note.version_id).execute();
    assert.deepEqual(await find.search(u, 'ocelot', '&history=true'), []);
    assert.deepEqual(await find.titles(u, 'lynx', '&history=true'), ['Pruned']);
    assert.equal(await indexRows(), await versionCount());
    expectNoContent(
      await ctx.app.inject({
        method: 'DELETE',
        url: '/api/auth/owner',
        headers: u.auth,
        payload: { password: u.password },
      }),
    );
    assert.equal(await indexRows(), await versionCount());
  });

  test('notes written before the index existed are indexed by the maintenance pass', async () => {
    const u = await newSession(ctx.app);
    const note = await api.createOk(u, { title: 'Legacy', content: 'axolotl' });
    await api.addVersionOk(u, note.id, { title: 'Legacy', content: 'salamander' });
    // Drop the note's index entries, as if it predated search.
    const { sql } = await import('kysely');
    const entries = sql.table(ctx.kind === 'postgres' ? 'search_history' : 'search_version_keys');
    await sql`delete from ${entries} where note_id = ${note.id}`.execute(ctx.database.db);
    assert.deepEqual(await find.search(u, 'salamander'), []);
    const { runTasks } = await import('../../src/jobs/maintenance.js');
    const { maintenanceTasks } = await import('../../src/jobs/tasks.js');
    const [outcome] = await runTasks(
      ctx.database,
      maintenanceTasks(ctx.config).filter((t) => t.name === 'search-index'),
      new Date(),
    );
    assert.deepEqual(outcome, {
      task: 'search-index',
      status: 'done',
      counts: { versions: 2 },
      summary: 'indexed 2 versions the search index lacked',
    });
    assert.deepEqual(await find.titles(u, 'salamander'), ['Legacy']);
    assert.deepEqual(await find.search(u, 'axolotl'), []);
    assert.deepEqual(await find.titles(u, 'axolotl', '&history=true'), ['Legacy']);
    assert.equal(await indexRows(), await versionCount());
  });

  test('q: required, 1 to 256 characters; no token 401', async () => {
    const message = 'Query parameter "q" must be 1 to 256 characters';
    expectProblem(await find.raw(s, ''), 400, 'Query parameter "q" is required (1 to 256 characters)', 'invalid_query');
    expectProblem(await find.raw(s, 'q='), 400, message, 'invalid_query');
    expectProblem(await find.raw(s, `q=${'a'.repeat(257)}`), 400, message, 'invalid_query');
    assert.deepEqual(await find.search(s, '😀'.repeat(256)), []);
    assert.deepEqual(await find.search(s, `${'a'.repeat(255)}*`), []);
    expectProblem(await find.raw(undefined, 'q=x'), 401, 'Unauthorized', 'unauthorized');
  });

  test('queries that look like engine syntax are just words', async () => {
    const u = await newSession(ctx.app);
    await api.createOk(u, { title: 'Syntax', content: 'this AND that OR NOT near column: title body owner' });
    for (const q of [
      'AND',
      'OR',
      'NOT',
      'NEAR(this that)',
      'title: body',
      '{title}: syntax',
      "o'brien",
      'a & b | !c',
      '(that)',
      'that:*',
      '^this',
      '"',
      '""',
      '-',
      '*',
      '-*',
      '"*"',
    ]) {
      const res = await find.raw(u, `q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
    }
    assert.deepEqual(await find.titles(u, 'AND OR'), ['Syntax']);
    assert.deepEqual(await find.titles(u, 'column: owner'), ['Syntax']);
    assert.deepEqual(await find.titles(u, 'NEAR(this that)'), []);
  });

  test('work limits: repeats count once; over 32 clauses or 32 words in a phrase is a 400 naming the limit', async () => {
    // Repeats change nothing: the same notes, the same snippets.
    assert.deepEqual(await find.search(s, Array(25).fill('tomatoes').join(' ')), await find.search(s, 'tomatoes'));
    assert.deepEqual(await find.titles(s, 'quick -fox -fox -fox'), await find.titles(s, 'quick -fox'));
    // Wanted and excluded at once: nothing.
    assert.deepEqual(await find.titles(s, 'tomatoes -tomatoes'), []);
    // 32 different words (a note with all of them is found); 33 is refused.
    const words = Array.from({ length: 33 }, (_, i) => `w${i}`);
    await api.createOk(s, { title: 'Many words', content: words.join(' ') });
    assert.deepEqual(await find.titles(s, words.slice(0, 32).join(' ')), ['Many words']);
    assert.deepEqual(await find.titles(s, `"${words.slice(0, 32).join(' ')}"`), ['Many words']);
    expectProblem(
      await find.raw(s, `q=${encodeURIComponent(words.join(' '))}`),
      400,
      'Query parameter "q" may have at most 32 different words or phrases',
      'invalid_query',
    );
    expectProblem(
      await find.raw(s, `q=${encodeURIComponent(`"${words.join(' ')}"`)}`),
      400,
      'Query parameter "q" may have at most 32 words in a phrase',
      'invalid_query',
    );
  });
});
