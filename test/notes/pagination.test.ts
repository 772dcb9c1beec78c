import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectProblem, notesClient, okJson, type Note, type VersionRow } from './support.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

const LIMIT_ERROR = 'Query parameter "limit" must be an integer from 1 to 100';
const OFFSET_ERROR = 'Query parameter "offset" must be an integer 0 or more';

/** Values that are not an integer in range; each is 400 naming the parameter. */
const BAD_LIMITS = ['0', '101', '-1', 'abc', '1.5', '', '1e1', '+5', '0x10', ' 5', '99999999999999999999'];
const BAD_OFFSETS = ['-1', 'abc', '1.5', '', '1e1', '+5', '99999999999999999999'];

forEachDatabase('notes pagination', (ctx) => {
  const api = notesClient(() => ctx.app);

  test('GET /api/notes: every note by default (more than 50), most recently updated first', async () => {
    const s = await newSession(ctx.app);
    const created: Note[] = [];
    for (let i = 0; i < 55; i += 1) {
      clock.tick();
      created.push(await api.createOk(s, { title: `note ${i}` }));
    }
    const newestFirst = created.map((n) => n.id).reverse();
    // Every answer also says how many notes there are in all, whatever the page.
    const ids = (res: Awaited<ReturnType<typeof api.list>>) => {
      assert.equal(res.headers['x-total-count'], '55');
      return okJson<Note[]>(res).map((n) => n.id);
    };
    assert.deepEqual(ids(await api.list(s)), newestFirst);

    // Optional limit/offset.
    assert.deepEqual(ids(await api.list(s, '?limit=10')), newestFirst.slice(0, 10), 'first page');
    assert.deepEqual(ids(await api.list(s, '?limit=10&offset=10')), newestFirst.slice(10, 20));
    assert.deepEqual(ids(await api.list(s, '?limit=10&offset=50')), newestFirst.slice(50), 'last, partial page');
    assert.deepEqual(ids(await api.list(s, '?limit=5&offset=50')), newestFirst.slice(50), 'last page, exactly full');
    assert.deepEqual(ids(await api.list(s, '?limit=100')), newestFirst, 'the maximum limit');
    assert.deepEqual(ids(await api.list(s, '?limit=1&offset=54')), newestFirst.slice(54));
    assert.deepEqual(ids(await api.list(s, '?offset=50')), newestFirst.slice(50), 'an offset alone pages from there');
    assert.deepEqual(ids(await api.list(s, '?offset=0')), newestFirst);
    for (const query of ['?limit=10&offset=55', '?limit=100&offset=1000', '?offset=55', '?offset=9007199254740991']) {
      const res = await api.list(s, query);
      assert.deepEqual(okJson(res), [], `past the end: ${query}`);
      assert.equal(res.headers['x-total-count'], '55', `past the end: ${query}`);
    }
  });

  test('GET /api/notes: X-Total-Count counts what the filters let through (folder, tag, pinned, archived), never the trash or other people', async () => {
    const s = await newSession(ctx.app);
    const other = await newSession(ctx.app);
    await api.createOk(other, { title: 'not mine' });
    const made = await api.inject({ method: 'POST', url: '/api/folders', headers: s.auth, payload: { name: 'Work' } });
    assert.equal(made.statusCode, 201);
    const folder = made.json<{ id: string }>();
    const file = (id: string, change: object) =>
      api.inject({ method: 'PATCH', url: `/api/notes/${id}`, headers: s.auth, payload: change });
    for (let i = 0; i < 7; i += 1) {
      const note = await api.createOk(s, {
        title: `n${i}`,
        content: i < 3 ? '#plan' : 'plain',
        folder_id: i < 4 ? folder.id : null,
      });
      if (i === 0) assert.equal((await file(note.id, { pinned: true })).statusCode, 200);
      if (i === 6) assert.equal((await file(note.id, { archived: true })).statusCode, 200);
      if (i === 5) assert.equal((await api.remove(s, note.id)).statusCode, 204);
    }
    const expected: Array<[string, string]> = [
      ['', '5'],
      [`?folder=${folder.id}`, '4'],
      ['?folder=root', '1'],
      ['?tag=plan', '3'],
      ['?pinned=true', '1'],
      ['?archived=true', '1'],
      [`?folder=${folder.id}&tag=%23plan`, '3'],
    ];
    for (const [query, total] of expected) {
      for (const page of [
        '',
        `${query ? '&' : '?'}limit=1`,
        `${query ? '&' : '?'}limit=1&offset=1`,
        `${query ? '&' : '?'}limit=2&offset=100`,
      ]) {
        const res = await api.list(s, query + page);
        assert.equal(res.statusCode, 200, query + page);
        assert.equal(res.headers['x-total-count'], total, query + page);
      }
    }
  });

  test('GET /api/notes: bad limit or offset is 400 naming the parameter', async () => {
    const s = await newSession(ctx.app);
    await api.createOk(s);
    for (const value of BAD_LIMITS) {
      expectProblem(await api.list(s, `?limit=${encodeURIComponent(value)}`), 400, LIMIT_ERROR, 'invalid_query');
      expectProblem(
        await api.list(s, `?limit=${encodeURIComponent(value)}&offset=0`),
        400,
        LIMIT_ERROR,
        'invalid_query',
      );
    }
    for (const value of BAD_OFFSETS) {
      expectProblem(await api.list(s, `?offset=${encodeURIComponent(value)}`), 400, OFFSET_ERROR, 'invalid_query');
      expectProblem(
        await api.list(s, `?limit=10&offset=${encodeURIComponent(value)}`),
        400,
        OFFSET_ERROR,
        'invalid_query',
      );
    }
    expectProblem(
      await api.list(s, '?limit=1&limit=2'),
      400,
      'Query parameter "limit" must be given once',
      'invalid_query',
    );
    expectProblem(
      await api.list(s, '?offset=1&offset=2'),
      400,
      'Query parameter "offset" must be given once',
      'invalid_query',
    );
  });

  describe('version history of 120 versions', () => {
    let s: Session;
    let note: Note;
    /** Version rows by number. */
    let rows: Map<number, VersionRow>;
    const numbers = (res: Awaited<ReturnType<typeof api.versions>>) => okJson<VersionRow[]>(res).map((r) => r.version);
    const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

    before(async () => {
      s = await newSession(ctx.app);
      note = await api.createOk(s, { title: 'version 1', content: 'content 1' });
      for (let v = 2; v <= 120; v += 1)
        await api.addVersionOk(s, note.id, { title: `version ${v}`, content: `content ${v}` });
      rows = new Map((await api.history(s, note.id)).map((r) => [r.version, r]));
    });

    test('GET /versions: default limit 50, max 100, first and last pages, past the end is []', async () => {
      assert.deepEqual([...rows.keys()], range(120, 1), 'the whole history, newest first, no gap');
      for (const [v, row] of rows) assert.equal(row.title, `version ${v}`);
      assert.equal(new Set([...rows.values()].map((r) => r.id)).size, 120);

      assert.deepEqual(numbers(await api.versions(s, note.id)), range(120, 71), 'default: limit 50, offset 0');
      assert.deepEqual(numbers(await api.versions(s, note.id, '?offset=0')), range(120, 71));
      assert.deepEqual(numbers(await api.versions(s, note.id, '?limit=100')), range(120, 21), 'the maximum');
      assert.deepEqual(numbers(await api.versions(s, note.id, '?limit=1')), [120]);
      assert.deepEqual(
        numbers(await api.versions(s, note.id, '?offset=50')),
        range(70, 21),
        'an offset alone: limit 50',
      );
      assert.deepEqual(
        numbers(await api.versions(s, note.id, '?limit=100&offset=100')),
        range(20, 1),
        'last, partial page',
      );
      assert.deepEqual(
        numbers(await api.versions(s, note.id, '?limit=20&offset=100')),
        range(20, 1),
        'last page, exactly full',
      );
      assert.deepEqual(numbers(await api.versions(s, note.id, '?limit=50&offset=119')), [1]);
      for (const query of [
        '?offset=120',
        '?limit=100&offset=120',
        '?limit=1&offset=1000',
        '?offset=9007199254740991',
      ]) {
        assert.deepEqual(okJson(await api.versions(s, note.id, query)), [], `past the end: ${query}`);
      }
    });

    test('GET /versions at the deepest page returns exactly the right rows', async () => {
      const page = okJson<VersionRow[]>(await api.versions(s, note.id, '?limit=50&offset=100'));
      assert.deepEqual(
        page,
        range(20, 1).map((v) => rows.get(v)),
      );
      const middle = okJson<VersionRow[]>(await api.versions(s, note.id, '?limit=7&offset=33'));
      assert.deepEqual(
        middle,
        range(87, 81).map((v) => rows.get(v)),
      );
      // The oldest row is the note's first version.
      assert.equal(page.at(-1)!.id, note.version_id);
      // Every page boundary: consecutive pages of 30 cover the history exactly once.
      const seen: number[] = [];
      for (let offset = 0; offset < 130; offset += 30)
        seen.push(...numbers(await api.versions(s, note.id, `?limit=30&offset=${offset}`)));
      assert.deepEqual(seen, range(120, 1));
    });

    test('GET /versions: bad limit or offset is 400 naming the parameter', async () => {
      for (const value of BAD_LIMITS) {
        expectProblem(
          await api.versions(s, note.id, `?limit=${encodeURIComponent(value)}`),
          400,
          LIMIT_ERROR,
          'invalid_query',
        );
      }
      for (const value of BAD_OFFSETS) {
        expectProblem(
          await api.versions(s, note.id, `?limit=5&offset=${encodeURIComponent(value)}`),
          400,
          OFFSET_ERROR,
          'invalid_query',
        );
      }
      expectProblem(
        await api.versions(s, note.id, '?limit=1&limit=2'),
        400,
        'Query parameter "limit" must be given once',
        'invalid_query',
      );
    });
  });
});
