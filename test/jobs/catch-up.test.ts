import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../src/db/schema.js';
import { after, describe } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.js';
import { runTask, startMaintenance, type Maintenance } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { captureLogs } from '../helpers/logs.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { forEachDatabase, newSession, testConfig, type TestContext } from '../helpers/harness.js';

/**
 * A rolling upgrade on PostgreSQL: after this build migrated, replicas of the previous release
 * still write, and a release from before tags knows nothing of them. This build's catch-up
 * derives their tags at its next pass (every 15 s after start-up), not at some later hourly one.
 * SQLite has no rolling upgrade (one process owns the file); the same pass runs there and is
 * tested there too.
 */

/**
 * A save as the release before tags wrote it: the version and the note's row, tags untouched.
 * `now`: the writer's clock (another machine's).
 */
async function saveAsReleaseBeforeTags(
  db: Db,
  noteId: string,
  title: string,
  content: string,
  now = new Date().toISOString(),
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const versionId = randomUUID();
    const advanced = await trx
      .updateTable('notes')
      .set((eb) => ({
        version: eb('version', '+', 1),
        version_id: versionId,
        title: Buffer.from(title),
        updated_at: now,
      }))
      .where('id', '=', noteId)
      .returning('version')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('note_versions')
      .values({
        id: versionId,
        note_id: noteId,
        version: advanced.version,
        title: Buffer.from(title),
        content: Buffer.from(content),
        created_at: now,
      })
      .execute();
  });
}

/** Into and out of the trash as the release before tags did it: `deleted_at` alone. */
async function trashAsReleaseBeforeTags(db: Db, noteId: string): Promise<void> {
  await db.updateTable('notes').set({ deleted_at: new Date().toISOString() }).where('id', '=', noteId).execute();
}

async function restoreAsReleaseBeforeTags(db: Db, noteId: string): Promise<void> {
  await db.updateTable('notes').set({ deleted_at: null }).where('id', '=', noteId).execute();
}

/** Maintenance whose catch-up timer never fires within a test: passes run when the test says. */
async function startIdleMaintenance(ctx: TestContext): Promise<Maintenance> {
  const maintenance = startMaintenance({
    database: ctx.database,
    tasks: maintenanceTasks(ctx.config),
    log: captureLogs().logger,
    catchUp: { everyMs: 3_600_000, forMs: 3_600_000 },
  });
  // The start-up pass is done (and claimed the hour) before the old replica writes.
  await maintenance.current;
  return maintenance;
}

async function tagsOf(app: FastifyInstance, auth: Record<string, string>, id: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: auth });
  assert.equal(res.statusCode, 200);
  return (res.json() as { tags: string[] }).tags;
}

async function taggedIds(app: FastifyInstance, auth: Record<string, string>, tag: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: `/api/notes?tag=${encodeURIComponent(tag)}`, headers: auth });
  assert.equal(res.statusCode, 200);
  return (res.json() as Array<{ id: string }>).map((n) => n.id);
}

async function tagCounts(app: FastifyInstance, auth: Record<string, string>): Promise<Record<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/api/tags', headers: auth });
  assert.equal(res.statusCode, 200);
  return Object.fromEntries((res.json() as Array<{ name: string; count: number }>).map((t) => [t.name, t.count]));
}

async function createNote(app: FastifyInstance, auth: Record<string, string>, content: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: auth,
    payload: { title: 'Note', content },
  });
  assert.equal(res.statusCode, 201);
  return (res.json() as { id: string }).id;
}

forEachDatabase('the tags catch-up after start-up derives what older replicas wrote', (ctx) => {
  test('a note created the old way gets its tags at the next catch-up pass', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'rolling');
      const id = await createNote(ctx.app, s.auth, 'written by #rolling/upgrade');
      // As the previous release writes it: no tags derived, no tag rows.
      const db = ctx.database.db;
      await db.updateTable('notes').set({ tags: null }).where('id', '=', id).execute();
      await db.deleteFrom('note_tags').where('note_id', '=', id).execute();
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), []);

      await maintenance.catchUpNow();
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['rolling/upgrade']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'rolling'), [id]);
    } finally {
      await maintenance.stop();
    }
  });

  test('a version saved the old way gets its own tags at the next catch-up pass', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'edited');
      const id = await createNote(ctx.app, s.auth, 'first #before and #kept');
      const untouched = await createNote(ctx.app, s.auth, 'saved by this build #untouched');
      await saveAsReleaseBeforeTags(ctx.database.db, id, 'Note', 'second #after and #kept');
      // What the old replica left: the text of version 2, the tags of version 1.
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['before', 'kept']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'after'), []);

      await maintenance.catchUpNow();
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['after', 'kept']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'after'), [id]);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'before'), []);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'kept'), [id]);
      assert.deepEqual(await tagsOf(ctx.app, s.auth, untouched), ['untouched']);

      // Saved the old way again, after the pass: the next pass looks from where the last one started.
      await saveAsReleaseBeforeTags(ctx.database.db, id, 'Note', 'third #again');
      await maintenance.catchUpNow();
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['again']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'kept'), []);
    } finally {
      await maintenance.stop();
    }
  });

  test('a note moved into the trash the old way leaves the tag counts at the next catch-up pass', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'trashed');
      const id = await createNote(ctx.app, s.auth, 'to be thrown away #gone/soon and #kept');
      const other = await createNote(ctx.app, s.auth, 'stays #kept');
      await trashAsReleaseBeforeTags(ctx.database.db, id);
      // What the old replica left: a note in the trash still counted by its tags.
      assert.deepEqual(await tagCounts(ctx.app, s.auth), { gone: 1, 'gone/soon': 1, kept: 2 });

      await maintenance.catchUpNow();
      assert.deepEqual(await tagCounts(ctx.app, s.auth), { kept: 1 });
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'kept'), [other]);

      // Out of the trash by this build: found by its tags again.
      const restored = await ctx.app.inject({ method: 'POST', url: `/api/trash/${id}/restore`, headers: s.auth });
      assert.equal(restored.statusCode, 200);
      assert.deepEqual(await tagCounts(ctx.app, s.auth), { gone: 1, 'gone/soon': 1, kept: 2 });
    } finally {
      await maintenance.stop();
    }
  });

  test('a note taken out of the trash the old way is found by its tags at the next catch-up pass', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'restored');
      const id = await createNote(ctx.app, s.auth, 'back again #back');
      const trashed = await ctx.app.inject({ method: 'DELETE', url: `/api/notes/${id}`, headers: s.auth });
      assert.equal(trashed.statusCode, 204);
      await restoreAsReleaseBeforeTags(ctx.database.db, id);
      // What the old replica left: a note out of the trash that no tag finds.
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['back']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'back'), []);
      assert.deepEqual(await tagCounts(ctx.app, s.auth), {});

      await maintenance.catchUpNow();
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'back'), [id]);
      assert.deepEqual(await tagCounts(ctx.app, s.auth), { back: 1 });
    } finally {
      await maintenance.stop();
    }
  });

  test('a note taken out of the trash the old way, then saved by this build with its tags unchanged, is found by them', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'resaved');
      const id = await createNote(ctx.app, s.auth, 'first #same');
      const trashed = await ctx.app.inject({ method: 'DELETE', url: `/api/notes/${id}`, headers: s.auth });
      assert.equal(trashed.statusCode, 204);
      await restoreAsReleaseBeforeTags(ctx.database.db, id);
      // This build's save keeps tags that did not change as they are: it writes no rows.
      const saved = await ctx.app.inject({
        method: 'POST',
        url: `/api/notes/${id}/versions`,
        headers: s.auth,
        payload: { title: 'Note', content: 'second #same' },
      });
      assert.equal(saved.statusCode, 204);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'same'), []);

      await maintenance.catchUpNow();
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'same'), [id]);
    } finally {
      await maintenance.stop();
    }
  });

  test('a version saved the old way by a replica whose clock is an hour behind still gets its tags', async () => {
    const maintenance = await startIdleMaintenance(ctx);
    try {
      const s = await newSession(ctx.app, 'skewed');
      const id = await createNote(ctx.app, s.auth, 'first #before');
      const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
      await saveAsReleaseBeforeTags(ctx.database.db, id, 'Note', 'second #after', anHourAgo);
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['before']);

      await maintenance.catchUpNow();
      assert.deepEqual(await tagsOf(ctx.app, s.auth, id), ['after']);
      assert.deepEqual(await taggedIds(ctx.app, s.auth, 'after'), [id]);
    } finally {
      await maintenance.stop();
    }
  });

  test('after the catch-up window the hourly pass settles what an older replica still writes', async () => {
    const s = await newSession(ctx.app, 'late');
    const id = await createNote(ctx.app, s.auth, 'first #early');
    const gone = await createNote(ctx.app, s.auth, 'thrown away late #late');
    await saveAsReleaseBeforeTags(ctx.database.db, id, 'Note', 'second #late');
    await trashAsReleaseBeforeTags(ctx.database.db, gone);
    const task = maintenanceTasks(ctx.config).find((t) => t.name === 'tags-backfill')!;
    // The hourly run, as the timer starts it (no catch-up): due, whatever ran before.
    const outcome = await runTask(ctx.database, task, new Date(Date.now() + 7 * 3_600_000), { everyMs: 3_600_000 });
    assert.equal(outcome.status, 'done');
    assert.deepEqual(await tagCounts(ctx.app, s.auth), { late: 1 });
    assert.deepEqual(await taggedIds(ctx.app, s.auth, 'late'), [id]);
  });
});

/**
 * What older replicas left wrong before this build's migration (2026-11-27-81-o) is not known to
 * it: the migration records no version for any note, and the first pass after it looks at every
 * note once, rewriting only what is wrong.
 */
for (const kind of databaseKinds) {
  describe(`the first pass after the migration [${kind}]`, () => {
    const scratches: ScratchDatabase[] = [];
    after(async () => {
      for (const scratch of scratches) await scratch.drop();
    });

    test('settles what older replicas left wrong before it and records the rest as right', async () => {
      const scratch = await createScratchDatabase(kind);
      scratches.push(scratch);
      const config = testConfig(scratch.url);
      const database = openDatabase(config.database);
      try {
        const { error } = await createMigrator(database.db).migrateTo('2026-11-27-51-t-teams2');
        if (error !== undefined) throw error;
        const db = database.db;
        const now = new Date().toISOString();
        const owner = randomUUID();
        await db
          .insertInto('users')
          .values({ id: owner, username: 'before', password_hash: 'x', created_at: now, updated_at: now } as never)
          .execute();
        // Each note as the previous release left it: its tags, its rows, its text.
        const note = async (text: string, tags: string, rows: string[], trashed = false) => {
          const id = randomUUID();
          const versionId = randomUUID();
          await db
            .insertInto('notes')
            .values({
              id,
              owner_id: owner,
              title: Buffer.from('Note'),
              version: 1,
              version_id: versionId,
              created_at: now,
              updated_at: now,
              deleted_at: trashed ? now : null,
              tags,
            } as never)
            .execute();
          await db
            .insertInto('note_versions')
            .values({
              id: versionId,
              note_id: id,
              version: 1,
              title: Buffer.from('Note'),
              content: Buffer.from(text),
              created_at: now,
            })
            .execute();
          for (const tag of rows)
            await db.insertInto('note_tags').values({ note_id: id, owner_id: owner, tag }).execute();
          return id;
        };
        const right = await note('fine #right', 'right', ['right']);
        const trashedRight = await note('in the trash #bin', 'bin', [], true);
        const trashedWithRows = await note('trashed by an old replica #left', 'left', ['left'], true);
        const restoredWithout = await note('restored by an old replica #back', 'back', []);
        const savedStale = await note('saved by an old replica #new', 'old', ['old']);

        await migrateToLatest(db);
        const task = maintenanceTasks(config).find((t) => t.name === 'tags-backfill')!;
        const outcome = await runTask(database, task, new Date());
        assert.equal(outcome.status, 'done');
        assert.deepEqual(outcome.status === 'done' && outcome.counts, { notes: 0, settled: 3, checked: 2 });

        const rows = await db.selectFrom('note_tags').select(['note_id', 'tag']).execute();
        const rowsOf = (id: string) => rows.filter((r) => r.note_id === id).map((r) => r.tag);
        assert.deepEqual(rowsOf(right), ['right']);
        assert.deepEqual(rowsOf(trashedRight), []);
        assert.deepEqual(rowsOf(trashedWithRows), []);
        assert.deepEqual(rowsOf(restoredWithout), ['back']);
        assert.deepEqual(rowsOf(savedStale), ['new']);
        const stale = await db
          .selectFrom('notes')
          .select('tags')
          .where('id', '=', savedStale)
          .executeTakeFirstOrThrow();
        assert.equal(stale.tags, 'new');
        // Every note recorded: the next pass has nothing to look at.
        const again = await runTask(database, task, new Date());
        assert.deepEqual(again.status === 'done' && again.counts, { notes: 0, settled: 0, checked: 0 });
      } finally {
        await database.close();
      }
    });
  });
}
