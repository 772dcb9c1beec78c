import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaintenance } from '../../src/jobs/maintenance.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { captureLogs } from '../helpers/logs.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

/**
 * A rolling upgrade (issue #43, finding 4): after this build migrated, replicas of the previous
 * release still write notes, without tags. This build's maintenance catches up on them soon after
 * start-up, not at the next hourly pass.
 */
forEachDatabase('the tags back-fill catches up on notes older replicas write', (ctx) => {
  test('a note written the old way after start-up gets its tags within the catch-up period', async () => {
    const logs = captureLogs();
    const maintenance = startMaintenance({
      database: ctx.database,
      tasks: maintenanceTasks(ctx.config),
      log: logs.logger,
      catchUp: { everyMs: 50, forMs: 60_000 },
    });
    try {
      // The start-up pass is done (and claimed the hour) before the old replica writes.
      await maintenance.current;
      const s = await newSession(ctx.app, 'rolling');
      const created = await ctx.app.inject({
        method: 'POST',
        url: '/api/notes',
        headers: s.auth,
        payload: { title: 'Old replica', content: 'written by #rolling/upgrade' },
      });
      const id = (created.json() as { id: string }).id;
      // As the previous release writes it: no tags derived, no tag rows.
      const db = ctx.database.db;
      await db.updateTable('notes').set({ tags: null }).where('id', '=', id).execute();
      await db.deleteFrom('note_tags').where('note_id', '=', id).execute();
      const tagsOf = async () =>
        (
          (await ctx.app.inject({ method: 'GET', url: `/api/notes/${id}`, headers: s.auth })).json() as {
            tags: string[];
          }
        ).tags;
      assert.deepEqual(await tagsOf(), []);
      await until(async () => (await tagsOf()).length > 0, 'the catch-up to derive the tags');
      assert.deepEqual(await tagsOf(), ['rolling/upgrade']);
      const tagged = await ctx.app.inject({ method: 'GET', url: '/api/notes?tag=rolling', headers: s.auth });
      assert.deepEqual(
        (tagged.json() as Array<{ id: string }>).map((n) => n.id),
        [id],
      );
    } finally {
      await maintenance.stop();
    }
  });
});
