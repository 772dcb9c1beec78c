import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import {
  expectNoContent,
  expectNoteNotFound,
  expectProblem,
  MISSING_ID,
  notesClient,
  okJson,
  TIMESTAMP,
  type Note,
} from '../notes/support.js';
import { runTasks } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { purgeTrash } from '../../src/trash/trash.service.js';
import { frozenDate } from '../helpers/clock.js';

const clock = frozenDate();

interface TrashEntry {
  id: string;
  title: string;
  deleted_at: string;
  purge_at: string;
}

const DAY = 24 * 60 * 60 * 1000;

forEachDatabase('trash', (ctx) => {
  const api = notesClient(() => ctx.app);
  const trash = (s: Session, query = '') =>
    ctx.app.inject({ method: 'GET', url: `/api/trash${query}`, headers: s.auth });
  const restore = (s: Session, id: string) =>
    ctx.app.inject({ method: 'POST', url: `/api/trash/${id}/restore`, headers: s.auth });
  const purge = (s: Session, id: string) =>
    ctx.app.inject({ method: 'DELETE', url: `/api/trash/${id}`, headers: s.auth });
  const rowCount = async (table: 'notes' | 'note_versions', column: 'id' | 'note_id', id: string) =>
    (await ctx.database.db.selectFrom(table).select(column).where(column, '=', id).execute()).length;
  let owner: Session;
  before(async () => {
    owner = await newSession(ctx.app);
  });

  test('DELETE moves a note to the trash: 404 on every notes route, gone from the list, listed in GET /api/trash', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'Plans', content: 'v1' });
    await api.addVersionOk(s, note.id, { title: 'Plans 2', content: 'v2' });
    const history = await api.history(s, note.id);
    const kept = await api.createOk(s, { title: 'kept' });

    const before = Date.now();
    expectNoContent(await api.remove(s, note.id));
    expectNoteNotFound(await api.get(s, note.id));
    expectNoteNotFound(await api.versions(s, note.id));
    expectNoteNotFound(await api.version(s, note.id, history[0]!.id));
    expectNoteNotFound(await api.addVersion(s, note.id, { title: 'zombie', content: '' }));
    expectNoteNotFound(await api.remove(s, note.id));
    assert.deepEqual(
      okJson<Note[]>(await api.list(s)).map((n) => n.id),
      [kept.id],
    );

    const entries = okJson<TrashEntry[]>(await trash(s));
    assert.equal(entries.length, 1);
    const entry = entries[0]!;
    assert.deepEqual(Object.keys(entry), ['id', 'title', 'deleted_at', 'purge_at']);
    assert.match(entry.deleted_at, TIMESTAMP);
    assert.ok(Date.parse(entry.deleted_at) >= before - 1000 && Date.parse(entry.deleted_at) <= Date.now());
    assert.deepEqual(entry, {
      id: note.id,
      title: 'Plans 2',
      deleted_at: entry.deleted_at,
      purge_at: new Date(Date.parse(entry.deleted_at) + 30 * DAY).toISOString(),
    });
    // Still stored whole.
    assert.equal(await rowCount('note_versions', 'note_id', note.id), 2);
  });

  test('POST /api/trash/{id}/restore: 200 with the full note, back in lists with its whole history', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'one', content: 'first' });
    clock.tick();
    await api.addVersionOk(s, note.id, { title: 'two', content: 'second' });
    const current = okJson<Note>(await api.get(s, note.id));
    const history = await api.history(s, note.id);
    expectNoContent(await api.remove(s, note.id));

    const res = await restore(s, note.id);
    assert.equal(res.headers.etag, '"2"');
    assert.deepEqual(okJson<Note>(res), current);
    assert.deepEqual(okJson<Note>(await api.get(s, note.id)), current);
    assert.deepEqual(await api.history(s, note.id), history);
    assert.deepEqual(
      okJson<Note[]>(await api.list(s)).map((n) => n.id),
      [note.id],
    );
    assert.deepEqual(okJson(await trash(s)), []);
    // It works like any note again.
    await api.addVersionOk(s, note.id, { title: 'three', content: 'third' });
    // Restoring what is not in the trash: 404.
    expectNoteNotFound(await restore(s, note.id));
    expectNoteNotFound(await restore(s, MISSING_ID));
  });

  test('DELETE /api/trash/{id}: 204, the note and its versions are gone for good', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'doomed', content: 'x' });
    await api.addVersionOk(s, note.id, { title: 'doomed', content: 'y' });
    // Only a trashed note can be purged this way.
    expectNoteNotFound(await purge(s, note.id));
    expectNoContent(await api.remove(s, note.id));
    expectNoContent(await purge(s, note.id));
    assert.equal(await rowCount('notes', 'id', note.id), 0);
    assert.equal(await rowCount('note_versions', 'note_id', note.id), 0);
    expectNoteNotFound(await purge(s, note.id));
    expectNoteNotFound(await restore(s, note.id));
    assert.deepEqual(okJson(await trash(s)), []);
  });

  test("another user's trash is invisible: list, restore and purge answer as if missing", async () => {
    const other = await newSession(ctx.app);
    const note = await api.createOk(owner, { title: 'mine' });
    expectNoContent(await api.remove(owner, note.id));
    assert.deepEqual(okJson(await trash(other)), []);
    expectNoteNotFound(await restore(other, note.id));
    expectNoteNotFound(await purge(other, note.id));
    assert.ok(okJson<TrashEntry[]>(await trash(owner)).some((e) => e.id === note.id));
  });

  test('GET /api/trash: most recently deleted first, limit/offset, bad parameters 400, no token 401', async () => {
    const s = await newSession(ctx.app);
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) {
      const note = await api.createOk(s, { title });
      clock.tick();
      expectNoContent(await api.remove(s, note.id));
      ids.push(note.id);
    }
    const all = okJson<TrashEntry[]>(await trash(s));
    assert.deepEqual(
      all.map((e) => e.title),
      ['c', 'b', 'a'],
    );
    assert.deepEqual(
      okJson<TrashEntry[]>(await trash(s, '?limit=1&offset=1')).map((e) => e.id),
      [ids[1]],
    );
    assert.deepEqual(okJson(await trash(s, '?offset=3')), []);
    expectProblem(
      await trash(s, '?limit=0'),
      400,
      'Query parameter "limit" must be an integer from 1 to 100',
      'invalid_query',
    );
    expectProblem(
      await trash(s, '?offset=x'),
      400,
      'Query parameter "offset" must be an integer 0 or more',
      'invalid_query',
    );
    expectProblem(await ctx.app.inject({ method: 'GET', url: '/api/trash' }), 401, 'Unauthorized', 'unauthorized');
    expectProblem(await restore(s, 'nope'), 400, 'Invalid note ID', 'invalid_note_id');
    expectProblem(await purge(s, 'nope'), 400, 'Invalid note ID', 'invalid_note_id');
  });

  test('purgeTrash(db, now, config) deletes what has been in the trash TRASH_DAYS days, not before', async () => {
    const s = await newSession(ctx.app);
    const old = await api.createOk(s, { title: 'old' });
    const recent = await api.createOk(s, { title: 'recent' });
    const live = await api.createOk(s, { title: 'live' });
    expectNoContent(await api.remove(s, old.id));
    expectNoContent(await api.remove(s, recent.id));
    // Deletion times set by hand so the clock given to the purge decides.
    const db = ctx.database.db;
    await db.updateTable('notes').set({ deleted_at: '2026-01-01T00:00:00.000Z' }).where('id', '=', old.id).execute();
    await db.updateTable('notes').set({ deleted_at: '2026-01-20T00:00:00.000Z' }).where('id', '=', recent.id).execute();
    const purgeAt = okJson<TrashEntry[]>(await trash(s)).find((e) => e.id === old.id)!.purge_at;
    assert.equal(purgeAt, '2026-01-31T00:00:00.000Z');

    // A millisecond before the old note's time is up: nothing.
    assert.deepEqual(await purgeTrash(db, new Date('2026-01-30T23:59:59.999Z'), { trashDays: 30 }), { notes: 0 });
    assert.deepEqual(await purgeTrash(db, new Date(purgeAt), { trashDays: 30 }), { notes: 1 });
    assert.equal(await rowCount('notes', 'id', old.id), 0);
    assert.equal(await rowCount('note_versions', 'note_id', old.id), 0);
    assert.deepEqual(
      okJson<TrashEntry[]>(await trash(s)).map((e) => e.id),
      [recent.id],
    );
    // Live notes are never purged, however old; TRASH_DAYS=0 empties the trash (other tests' too).
    assert.ok((await purgeTrash(db, new Date('2030-01-01T00:00:00.000Z'), { trashDays: 0 })).notes >= 1);
    assert.equal(await rowCount('notes', 'id', recent.id), 0);
    assert.deepEqual(okJson(await trash(s)), []);
    assert.equal(okJson<Note>(await api.get(s, live.id)).title, 'live');
  });

  test('purgeTrash works in batches: more notes than one batch are all purged', async () => {
    const s = await newSession(ctx.app);
    const db = ctx.database.db;
    const ids: string[] = [];
    for (let i = 0; i < 205; i += 1) ids.push((await api.createOk(s, { title: `n${i}` })).id);
    await db.updateTable('notes').set({ deleted_at: '2025-01-01T00:00:00.000Z' }).where('id', 'in', ids).execute();
    const result = await purgeTrash(db, new Date('2026-01-01T00:00:00.000Z'), { trashDays: 30 });
    assert.ok(result.notes >= 205, JSON.stringify(result));
    assert.deepEqual(await db.selectFrom('notes').select('id').where('id', 'in', ids).execute(), []);
  });

  test('the maintenance pass (hourly job and `vellum maintenance`) purges the trash with its clock', async () => {
    const s = await newSession(ctx.app);
    const note = await api.createOk(s, { title: 'expiring' });
    expectNoContent(await api.remove(s, note.id));
    const [entry] = okJson<TrashEntry[]>(await trash(s));
    const tasks = maintenanceTasks(ctx.config).filter((t) => t.name === 'trash-purge');
    assert.equal(tasks.length, 1);
    const early = await runTasks(ctx.database, tasks, new Date(Date.parse(entry!.purge_at) - 1));
    assert.equal(early[0]!.status, 'done');
    assert.equal(await rowCount('notes', 'id', note.id), 1);
    const [outcome] = await runTasks(ctx.database, tasks, new Date(entry!.purge_at));
    assert.ok(outcome?.status === 'done' && outcome.counts.notes! >= 1, JSON.stringify(outcome));
    assert.equal(await rowCount('notes', 'id', note.id), 0);
  });

  test('TRASH_DAYS=0: DELETE removes the note and its versions at once; the trash stays empty', async () => {
    const app = await ctx.rebuild({ TRASH_DAYS: '0' });
    try {
      const s = await newSession(app);
      const note = await api.createOk(s, { title: 'gone', content: 'x' });
      expectNoContent(await api.remove(s, note.id));
      assert.equal(await rowCount('notes', 'id', note.id), 0);
      assert.equal(await rowCount('note_versions', 'note_id', note.id), 0);
      assert.deepEqual(okJson(await trash(s)), []);
      expectNoteNotFound(await api.remove(s, note.id));
    } finally {
      await ctx.rebuild();
    }
  });

  test('TRASH_DAYS sets purge_at', async () => {
    const app = await ctx.rebuild({ TRASH_DAYS: '7' });
    try {
      const s = await newSession(app);
      const note = await api.createOk(s, { title: 'week' });
      expectNoContent(await api.remove(s, note.id));
      const [entry] = okJson<TrashEntry[]>(await trash(s));
      assert.equal(entry!.purge_at, new Date(Date.parse(entry!.deleted_at) + 7 * DAY).toISOString());
    } finally {
      await ctx.rebuild();
    }
  });

  test('deleting the user removes their notes, trash included, at once', async () => {
    const s = await newSession(ctx.app);
    const trashed = await api.createOk(s, { title: 'trashed', content: 'x' });
    const live = await api.createOk(s, { title: 'live' });
    expectNoContent(await api.remove(s, trashed.id));
    expectNoContent(
      await ctx.app.inject({
        method: 'DELETE',
        url: '/api/auth/owner',
        headers: s.auth,
        payload: { password: s.password },
      }),
    );
    for (const id of [trashed.id, live.id]) {
      assert.equal(await rowCount('notes', 'id', id), 0);
      assert.equal(await rowCount('note_versions', 'note_id', id), 0);
    }
  });
});
