import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import {
  MAINTENANCE_INTERVAL_MS,
  runTask,
  startMaintenance,
  type MaintenanceTask,
} from '../../src/jobs/maintenance.js';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { captureLogs } from '../helpers/logs.js';
import { runCli } from '../helpers/cli.js';

/** A task that stops inside its run until released, to hold it mid-flight deterministically. */
function gatedTask(name: string) {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
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
      await migrateToLatest(first.db);
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
        {
          name: 'one',
          run: async (_db, now) => {
            order.push(`one@${now.toISOString()}`);
            return { a: 1 };
          },
        },
        {
          name: 'broken',
          run: async () => {
            throw new Error('boom');
          },
        },
        {
          name: 'two',
          run: async () => {
            order.push('two');
            return { b: 2 };
          },
        },
      ];
      const maintenance = startMaintenance({ database: first, tasks, log: logs.logger, clock });
      await maintenance.stop();
      assert.deepEqual(order, ['one@2026-01-02T03:04:05.000Z', 'two']);
      const lines = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(
        lines.some((l) => l.task === 'one' && l.a === 1 && l.msg === 'maintenance one: a: 1'),
        logs.lines.join('\n'),
      );
      assert.ok(lines.some((l) => l.task === 'broken' && l.level === 50 && l.msg === 'maintenance broken failed'));
    });

    // Without the lock the second run would wait on the gate too: the time-out turns that hang into a failure.
    test('a task already running skips instead of running twice, in this process and from another instance', {
      timeout: 10_000,
    }, async () => {
      const gated = gatedTask('gated');
      const running = runTask(first, gated.task, new Date());
      await gated.inside;
      assert.deepEqual(await runTask(first, gated.task, new Date()), { task: 'gated', status: 'skipped' });
      if (kind === 'postgres') {
        assert.deepEqual(await runTask(second, gated.task, new Date()), { task: 'gated', status: 'skipped' });
      }
      gated.release();
      assert.deepEqual(await running, { task: 'gated', status: 'done', counts: { items: 1 }, summary: 'items: 1' });
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
      assert.deepEqual(await runTask(second, task, new Date()), {
        task: 'flaky',
        status: 'done',
        counts: { ok: 1 },
        summary: 'ok: 1',
      });
    });

    test('a scheduled pass runs once per interval across instances; the CLI runs whenever asked', async () => {
      let runs = 0;
      const task: MaintenanceTask = {
        name: 'once',
        run: async () => ({ rows: ++runs }),
        describe: ({ rows }) => `run number ${rows}`,
      };
      const t0 = new Date('2026-03-01T10:00:00.000Z');
      const every = { everyMs: MAINTENANCE_INTERVAL_MS };
      assert.deepEqual(await runTask(first, task, t0, every), {
        task: 'once',
        status: 'done',
        counts: { rows: 1 },
        summary: 'run number 1',
      });
      // Another instance (or a restart) within the hour: not due.
      const later = new Date(t0.getTime() + 59 * 60_000);
      assert.deepEqual(await runTask(second, task, later, every), {
        task: 'once',
        status: 'not-due',
        lastRunAt: t0.toISOString(),
      });
      assert.deepEqual(await runTask(first, task, later, every), {
        task: 'once',
        status: 'not-due',
        lastRunAt: t0.toISOString(),
      });
      const next = new Date(t0.getTime() + MAINTENANCE_INTERVAL_MS);
      assert.equal((await runTask(second, task, next, every)).status, 'done');
      assert.equal(runs, 2);
      // On demand (vellum maintenance): runs now, and counts as the latest run.
      const now = new Date(next.getTime() + 60_000);
      assert.equal((await runTask(first, task, now)).status, 'done');
      assert.deepEqual(await runTask(second, task, new Date(now.getTime() + MAINTENANCE_INTERVAL_MS - 60_000), every), {
        task: 'once',
        status: 'not-due',
        lastRunAt: now.toISOString(),
      });
      assert.equal(runs, 3);
    });

    test('two instances starting together make one pass', async () => {
      let runs = 0;
      const clock = () => new Date('2026-04-01T00:00:00.000Z');
      const tasks: MaintenanceTask[] = [{ name: 'together', run: async () => ({ n: ++runs }) }];
      const a = startMaintenance({ database: first, tasks, log: captureLogs().logger, clock });
      const b = startMaintenance({ database: second, tasks, log: captureLogs().logger, clock });
      await Promise.all([a.stop(), b.stop()]);
      assert.equal(runs, 1);
    });

    test('a failed scheduled run gives its claim back, so the next tick retries', async () => {
      let fail = true;
      const task: MaintenanceTask = {
        name: 'retry',
        run: async () => {
          if (fail) throw new Error('hiccup');
          return { ok: 1 };
        },
      };
      const t0 = new Date('2026-05-01T00:00:00.000Z');
      const every = { everyMs: MAINTENANCE_INTERVAL_MS };
      assert.equal((await runTask(first, task, t0, every)).status, 'failed');
      fail = false;
      assert.equal((await runTask(second, task, new Date(t0.getTime() + 60_000), every)).status, 'done');
    });

    test('vellum maintenance says what each task did', { timeout: 60_000 }, async () => {
      const result = await runCli(['maintenance'], { DATABASE_URL: scratch.url });
      assert.deepEqual(result, {
        code: 0,
        stdout: [
          'history-retention: HISTORY_RETENTION is off; every version kept',
          'trash-purge: purged 0 notes deleted over 30 days ago',
          'search-index: search index complete',
          "tags-backfill: every note's tags derived",
          'audit-retention: deleted 0 auth events older than 90 days',
          'refresh-token-prune: deleted 0 expired or revoked refresh tokens',
          'passkey-challenges: deleted 0 expired passkey challenges',
          'account-links: deleted 0 used or expired password-reset and e-mail links',
          'attachments-gc: deleted 0 attachments no version linked to within 24 hours and 0 stored files nothing uses',
          'dav-properties: deleted 0 WebDAV properties of notes, folders and files deleted outside WebDAV',
          '',
        ].join('\n'),
        stderr: '',
      });
    });
  });
}
