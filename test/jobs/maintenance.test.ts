import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { runTask, startMaintenance, type MaintenanceTask } from '../../src/jobs/maintenance.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { captureLogs } from '../helpers/logs.js';

/** A task that stops inside its run until released, to hold it mid-flight deterministically. */
function gatedTask(name: string) {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const inside = new Promise<void>((resolve) => { entered = resolve; });
  const seen: Date[] = [];
  const task: MaintenanceTask = {
    name,
    async run(_db, now) {
      seen.push(now);
      entered();
      await gate;
      return { items: seen.length };
    },
  };
  return { task, release, inside, seen };
}

for (const kind of databaseKinds) {
  describe(`maintenance runner [${kind}]`, () => {
    let scratch: ScratchDatabase;
    let first: Database;
    let second: Database;
    before(async () => {
      scratch = await createScratchDatabase(kind);
      const config = loadConfig({ DATABASE_URL: scratch.url });
      first = openDatabase(config.database);
      // A second handle on the same database stands for another instance of the service.
      second = openDatabase(config.database);
    });
    after(async () => {
      await first.close();
      await second.close();
      await scratch.drop();
    });

    test('runs every task at start-up with the injected clock, in order, and a failure does not stop the rest', async () => {
      const logs = captureLogs();
      const order: string[] = [];
      const clock = () => new Date('2026-01-02T03:04:05.000Z');
      const tasks: MaintenanceTask[] = [
        { name: 'one', run: async (_db, now) => { order.push(`one@${now.toISOString()}`); return { a: 1 }; } },
        { name: 'broken', run: async () => { throw new Error('boom'); } },
        { name: 'two', run: async () => { order.push('two'); return { b: 2 }; } },
      ];
      const maintenance = startMaintenance({ database: first, tasks, log: logs.logger, clock });
      await maintenance.stop();
      assert.deepEqual(order, ['one@2026-01-02T03:04:05.000Z', 'two']);
      const lines = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(lines.some((l) => l.task === 'one' && l.a === 1 && l.msg === 'maintenance task done'));
      assert.ok(lines.some((l) => l.task === 'broken' && l.level === 50 && l.msg === 'maintenance task failed'));
    });

    // Without the lock the second run would wait on the gate too: the time-out turns that hang into a failure.
    test('a task already running skips instead of running twice, in this process and from another instance', { timeout: 10_000 }, async () => {
      const gated = gatedTask('gated');
      const running = runTask(first, gated.task, new Date());
      await gated.inside;
      assert.deepEqual(await runTask(first, gated.task, new Date()), { task: 'gated', status: 'skipped' });
      if (kind === 'postgres') {
        assert.deepEqual(await runTask(second, gated.task, new Date()), { task: 'gated', status: 'skipped' });
      }
      gated.release();
      assert.deepEqual(await running, { task: 'gated', status: 'done', counts: { items: 1 } });
      // Released: the other instance may run it now.
      assert.equal((await runTask(second, gated.task, new Date())).status, 'done');
    });

    test('a failed task releases its lock', async () => {
      let fail = true;
      const task: MaintenanceTask = {
        name: 'flaky',
        run: async () => {
          if (fail) throw new Error('database hiccup');
          return { ok: 1 };
        },
      };
      const outcome = await runTask(first, task, new Date());
      assert.equal(outcome.status, 'failed');
      fail = false;
      assert.deepEqual(await runTask(second, task, new Date()), { task: 'flaky', status: 'done', counts: { ok: 1 } });
    });
  });
}
