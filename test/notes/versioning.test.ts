import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectNoContent, expectProblem, notesClient, okJson, type Note } from './support.js';

const IF_MATCH_ERROR = 'If-Match must be an entity tag from GET /api/notes/{id}, like "3"';

forEachDatabase('notes versioning: concurrent writers, ETag and If-Match', (ctx) => {
  const api = notesClient(() => ctx.app);
  /** One account for the tests that only look at their own notes. */
  let shared: Session;
  before(async () => {
    shared = await newSession(ctx.app);
  });

  const expectMismatch = (res: Awaited<ReturnType<typeof api.addVersion>>, current: number) => {
    expectProblem(res, 412, `The note has changed: its current version is ${current}`, 'version_mismatch', {
      current_version: current,
    });
    assert.equal(res.headers.etag, `"${current}"`);
  };

  test('25 concurrent new versions: all 204, history exactly 1..26, no gap or duplicate', async () => {
    const s = shared;
    const note = await api.createOk(s, { title: 'v1', content: 'c1' });
    const writes = Array.from({ length: 25 }, (_, i) =>
      api.addVersion(s, note.id, { title: `writer ${i}`, content: `content ${i}` }),
    );
    const responses = await Promise.all(writes);
    for (const res of responses) expectNoContent(res);
    // Each writer was told a different new version; together they are 2..26.
    const tags = responses
      .map((res) => res.headers.etag as string)
      .sort((a, b) => Number(a.slice(1, -1)) - Number(b.slice(1, -1)));
    assert.deepEqual(
      tags,
      Array.from({ length: 25 }, (_, i) => `"${i + 2}"`),
    );

    const history = await api.history(s, note.id);
    assert.deepEqual(
      history.map((r) => r.version),
      Array.from({ length: 26 }, (_, i) => 26 - i),
    );
    assert.equal(new Set(history.map((r) => r.id)).size, 26);
    // Every writer's version is there once, under the number its ETag announced.
    const byWriter = new Map(
      responses.map((res, i) => [`writer ${i}`, Number((res.headers.etag as string).slice(1, -1))]),
    );
    for (const row of history.slice(0, 25)) assert.equal(byWriter.get(row.title), row.version, row.title);
    assert.deepEqual(history.at(-1), {
      id: note.version_id,
      title: 'v1',
      version: 1,
      created_at: note.created_at,
      label: null,
      restored_from: null,
      author_username: s.username,
      authors: [s.username],
    });
    // Times follow the numbers: a writer that waited for its turn never gets an earlier time.
    for (let i = 1; i < history.length; i += 1) {
      assert.ok(
        history[i - 1]!.created_at >= history[i]!.created_at,
        `version ${history[i - 1]!.version} is dated before version ${history[i]!.version}`,
      );
    }

    // The note shows the last version, and its content is that version's.
    const current = await api.get(s, note.id);
    assert.equal(current.headers.etag, '"26"');
    const body = okJson<Note>(current);
    assert.equal(body.version, 26);
    assert.equal(body.version_id, history[0]!.id);
    assert.equal(body.updated_at, history[0]!.created_at);
    assert.equal(body.title, history[0]!.title);
    assert.equal(body.content, `content ${body.title.slice('writer '.length)}`);
  });

  test('25 concurrent writers with the same If-Match: exactly one wins, the others get 412', async () => {
    const s = shared;
    const note = await api.createOk(s);
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        api.addVersion(s, note.id, { title: `writer ${i}`, content: '' }, { 'if-match': '"1"' }),
      ),
    );
    const winners = responses.filter((res) => res.statusCode === 204);
    assert.equal(winners.length, 1);
    assert.equal(winners[0]!.headers.etag, '"2"');
    for (const res of responses) if (res.statusCode !== 204) expectMismatch(res, 2);
    assert.deepEqual(
      (await api.history(s, note.id)).map((r) => r.version),
      [2, 1],
    );
  });

  test('the ETag/If-Match flow', async () => {
    const s = shared;
    const note = await api.createOk(s, { title: 'one', content: '1' });
    assert.equal((await api.get(s, note.id)).headers.etag, '"1"');

    const second = await api.addVersion(s, note.id, { title: 'two', content: '2' }, { 'if-match': '"1"' });
    expectNoContent(second);
    assert.equal(second.headers.etag, '"2"');
    assert.equal((await api.get(s, note.id)).headers.etag, '"2"');

    // A stale tag: 412 with the current version, and nothing written.
    expectMismatch(await api.addVersion(s, note.id, { title: 'lost update', content: 'x' }, { 'if-match': '"1"' }), 2);
    const unchanged = okJson<Note>(await api.get(s, note.id));
    assert.deepEqual([unchanged.title, unchanged.content, unchanged.version], ['two', '2', 2]);

    // "*" means any current version.
    const third = await api.addVersion(s, note.id, { title: 'three', content: '3' }, { 'if-match': '*' });
    expectNoContent(third);
    assert.equal(third.headers.etag, '"3"');

    // Weak tags never match (strong comparison), not even the current version's.
    expectMismatch(await api.addVersion(s, note.id, { title: 'weak', content: 'x' }, { 'if-match': 'W/"3"' }), 3);
    expectMismatch(
      await api.addVersion(s, note.id, { title: 'weak', content: 'x' }, { 'if-match': 'W/"1", W/"3"' }),
      3,
    );

    // A list matches when any strong tag is current.
    const fourth = await api.addVersion(s, note.id, { title: 'four', content: '4' }, { 'if-match': '"1", "3"' });
    expectNoContent(fourth);
    assert.equal(fourth.headers.etag, '"4"');
    const fifth = await api.addVersion(s, note.id, { title: 'five', content: '5' }, { 'if-match': 'W/"9", "4"' });
    expectNoContent(fifth);
    assert.equal(fifth.headers.etag, '"5"');
    expectMismatch(
      await api.addVersion(s, note.id, { title: 'stale list', content: 'x' }, { 'if-match': '"2","3","4"' }),
      5,
    );

    // Without If-Match the write is unconditional (the spec's plain POST).
    const sixth = await api.addVersion(s, note.id, { title: 'six', content: '6' });
    expectNoContent(sixth);
    assert.equal(sixth.headers.etag, '"6"');

    const history = await api.history(s, note.id);
    assert.deepEqual(
      history.map((r) => [r.version, r.title]),
      [
        [6, 'six'],
        [5, 'five'],
        [4, 'four'],
        [3, 'three'],
        [2, 'two'],
        [1, 'one'],
      ],
    );
  });

  test('well-formed tags that are not the current version do not match: 412', async () => {
    const s = shared;
    const note = await api.createOk(s);
    for (const tag of ['"01"', '"1.0"', '"0"', '""', '"abc"', '"999999999"', '"2"']) {
      expectMismatch(await api.addVersion(s, note.id, { title: 'x', content: 'x' }, { 'if-match': tag }), 1);
    }
    assert.deepEqual(
      (await api.history(s, note.id)).map((r) => r.version),
      [1],
    );
  });

  test('a malformed If-Match is 400 and writes nothing', async () => {
    const s = shared;
    const note = await api.createOk(s);
    for (const header of ['1', 'abc', '"1', '1"', "'1'", 'W/1', 'w/"1"', '"1" "2"', '"1",', ',', '', '**', '* , "1"']) {
      expectProblem(
        await api.addVersion(s, note.id, { title: 'x', content: 'x' }, { 'if-match': header }),
        400,
        IF_MATCH_ERROR,
        'validation_failed',
      );
    }
    assert.deepEqual(
      (await api.history(s, note.id)).map((r) => r.version),
      [1],
    );
  });

  test('If-Match on a missing note is 404, not 412', async () => {
    const s = shared;
    const note = await api.createOk(s);
    expectNoContent(await api.remove(s, note.id));
    for (const header of ['"1"', '*', 'W/"1"']) {
      expectProblem(
        await api.addVersion(s, note.id, { title: 'x', content: 'x' }, { 'if-match': header }),
        404,
        'Note not found',
        'note_not_found',
      );
    }
  });
});
