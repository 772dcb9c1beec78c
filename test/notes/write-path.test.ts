import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { setWriteCheckpoint } from '../../src/db/group-commit.js';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { expectNoContent, notesClient, okJson, type Note } from './support.js';

/**
 * The save path (issue #28): group commit on SQLite, one statement on PostgreSQL. Whatever the
 * database, concurrent saves are numbered without gaps, each caller hears its own outcome, and a
 * save that fails leaves the others it was written with.
 */
forEachDatabase('the write path: group commit and one-statement saves', (ctx) => {
  const api = notesClient(() => ctx.app);
  let s: Session;
  before(async () => {
    s = await newSession(ctx.app);
  });

  test('50 concurrent writers on one note: versions 2..51, each writer told its own, no gap', async () => {
    const note = await api.createOk(s, { title: 'one', content: '' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api.addVersion(s, note.id, { title: `w${i}`, content: `#tag${i % 3} text ${i}` }),
      ),
    );
    for (const res of responses) expectNoContent(res);
    const told = responses.map((res) => Number(String(res.headers.etag).slice(1, -1))).sort((a, b) => a - b);
    assert.deepEqual(
      told,
      Array.from({ length: 50 }, (_, i) => i + 2),
    );
    const history = await api.history(s, note.id);
    assert.deepEqual(
      history.map((row) => row.version),
      Array.from({ length: 51 }, (_, i) => 51 - i),
    );
    const byTitle = new Map(responses.map((res, i) => [`w${i}`, Number(String(res.headers.etag).slice(1, -1))]));
    for (const row of history.slice(0, 50)) assert.equal(byTitle.get(row.title), row.version);
    // The note's tags are the last version's, and the tag index agrees.
    const current = okJson<Note>(await api.get(s, note.id));
    const last = Number(current.title.slice(1));
    assert.deepEqual(current.tags, [`tag${last % 3}`]);
    const tagged = await ctx.app.inject({ method: 'GET', url: `/api/notes?tag=tag${last % 3}`, headers: s.auth });
    assert.ok(okJson<Note[]>(tagged).some((row) => row.id === note.id));
    for (const other of [0, 1, 2].filter((t) => t !== last % 3)) {
      const res = await ctx.app.inject({ method: 'GET', url: `/api/notes?tag=tag${other}`, headers: s.auth });
      assert.ok(!okJson<Note[]>(res).some((row) => row.id === note.id), `still found by #tag${other}`);
    }
  });

  test('50 concurrent writers over 10 notes and 20 concurrent creates: every note gap-free, every create at version 1', async () => {
    const notes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.createOk(s, { title: `many ${i}`, content: '' })),
    );
    const [saves, creates] = await Promise.all([
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api.addVersion(s, notes[i % 10]!.id, { title: `many ${i % 10}`, content: `save ${i}` }),
        ),
      ),
      Promise.all(Array.from({ length: 20 }, (_, i) => api.create(s, { title: `created ${i}`, content: `body ${i}` }))),
    ]);
    for (const res of saves) expectNoContent(res);
    for (const res of creates) {
      assert.equal(res.statusCode, 201);
      assert.equal(res.json<Note>().version, 1);
    }
    for (const note of notes) {
      const history = await api.history(s, note.id);
      assert.deepEqual(
        history.map((row) => row.version),
        [6, 5, 4, 3, 2, 1],
      );
    }
    // Each save is in the search index under its note: every one of the ten is found by its last text.
    const found = await ctx.app.inject({ method: 'GET', url: '/api/notes/search?q=save&limit=100', headers: s.auth });
    const ids = new Set(okJson<Array<{ id: string }>>(found).map((hit) => hit.id));
    for (const note of notes) assert.ok(ids.has(note.id), note.title);
  });

  test('a save that fails inside a batch answers its own error; the saves written with it are committed', async () => {
    const notes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api.createOk(s, { title: `batch ${i}`, content: '' })),
    );
    const doomed = notes[3]!;
    await refuseVersionsTitled(ctx, 'refused by a trigger');
    let batches = 0;
    let queued = 0;
    let allQueued: () => void = () => undefined;
    const queuedAll = new Promise<void>((resolve) => {
      allQueued = resolve;
    });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstReached: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      firstReached = resolve;
    });
    // SQLite: hold the first batch (note 0's save) so that the other five queue behind it and are
    // then written as one batch of five. PostgreSQL has no batches; the outcome must be the same.
    setWriteCheckpoint(ctx.database.db, async (step) => {
      if (step === 'write.queued' && ++queued === 6) allQueued();
      if (step !== 'write.batch') return;
      batches += 1;
      if (batches === 1) {
        firstReached();
        await held;
      }
    });
    try {
      const first = api.addVersion(s, notes[0]!.id, { title: 'batch 0', content: 'first' });
      if (ctx.kind === 'sqlite') await reached;
      const rest = notes.slice(1).map((note) =>
        api.addVersion(s, note.id, {
          title: note === doomed ? 'refused by a trigger' : note.title,
          content: 'second',
        }),
      );
      if (ctx.kind === 'sqlite') await queuedAll;
      release();
      const responses = await Promise.all([first, ...rest]);
      if (ctx.kind === 'sqlite') assert.equal(batches, 2, 'the five saves after the first were one batch');
      responses.forEach((res, i) => {
        if (i === 3) {
          assert.equal(res.statusCode, 500);
          assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
          assert.doesNotMatch(res.body, /trigger|refused/);
        } else {
          expectNoContent(res);
          assert.equal(res.headers.etag, '"2"');
        }
      });
      for (const note of notes) {
        const body = okJson<Note>(await api.get(s, note.id));
        assert.equal(body.version, note === doomed ? 1 : 2, note.title);
        assert.equal(body.content, note === doomed ? '' : note === notes[0] ? 'first' : 'second');
      }
      // The refused save left nothing behind: no version, and the next save is number 2.
      assert.deepEqual(
        (await api.history(s, doomed.id)).map((row) => row.version),
        [1],
      );
      await dropRefusal(ctx);
      const next = await api.addVersion(s, doomed.id, { title: 'batch 3', content: 'later' });
      assert.equal(next.headers.etag, '"2"');
    } finally {
      setWriteCheckpoint(ctx.database.db, undefined);
      await dropRefusal(ctx);
    }
  });

  after(async () => {
    await dropRefusal(ctx).catch(() => undefined);
  });
});

/** A trigger that refuses any version with this title: a failure after the note row was advanced. */
async function refuseVersionsTitled(
  ctx: { kind: string; database: { db: import('../../src/db/schema.js').Db } },
  title: string,
): Promise<void> {
  const hex = Buffer.from(title, 'utf8').toString('hex');
  if (ctx.kind === 'sqlite') {
    await sql
      .raw(`create trigger refuse_version before insert on note_versions when new.title = x'${hex}'
      begin select raise(abort, 'refused by a trigger'); end`)
      .execute(ctx.database.db);
    return;
  }
  await sql
    .raw(`create function refuse_version() returns trigger language plpgsql as $$
    begin if new.title = '\\x${hex}'::bytea then raise exception 'refused by a trigger'; end if; return new; end $$`)
    .execute(ctx.database.db);
  await sql
    .raw('create trigger refuse_version before insert on note_versions for each row execute function refuse_version()')
    .execute(ctx.database.db);
}

async function dropRefusal(ctx: {
  kind: string;
  database: { db: import('../../src/db/schema.js').Db };
}): Promise<void> {
  await sql
    .raw(
      ctx.kind === 'sqlite'
        ? 'drop trigger if exists refuse_version'
        : 'drop trigger if exists refuse_version on note_versions',
    )
    .execute(ctx.database.db);
  if (ctx.kind !== 'sqlite') await sql.raw('drop function if exists refuse_version()').execute(ctx.database.db);
}
