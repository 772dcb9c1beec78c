import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, parseHistoryRetention, type HistoryRetention } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { runTask, runTasks } from '../../src/jobs/maintenance.js';
import { HISTORY_RETENTION_TASK, maintenanceTasks } from '../../src/jobs/tasks.js';
import { planPrune, pruneHistory, versionRanges, type RetentionCandidate } from '../../src/notes/retention.js';
import { forEachDatabase, newSession, testConfig, type Session } from '../helpers/harness.js';
import { expectVersionNotFound, notesClient, okJson, type VersionRow } from './support.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const policy = (raw: string) => parseHistoryRetention(raw)!;

describe('HISTORY_RETENTION', () => {
  test('defaults to off; tiers parse to milliseconds, forever to Infinity, names and units case-insensitive', () => {
    assert.equal(loadConfig({}).historyRetention, null);
    assert.equal(loadConfig({ HISTORY_RETENTION: ' OFF ' }).historyRetention, null);
    assert.deepEqual(loadConfig({ HISTORY_RETENTION: 'all=30d, daily=365d,weekly=forever' }).historyRetention, {
      allMs: 30 * DAY,
      tiers: [
        { name: 'daily', ms: 365 * DAY },
        { name: 'weekly', ms: Infinity },
      ],
    });
    assert.deepEqual(parseHistoryRetention('HOURLY=2D'), { allMs: 0, tiers: [{ name: 'hourly', ms: 2 * DAY }] });
    assert.deepEqual(parseHistoryRetention('all=0d'), { allMs: 0, tiers: [] });
  });

  test('anything else stops start-up with a message naming the problem', () => {
    for (const [raw, why] of [
      ['all=30', '"all=30" is not NAME=<n>d or NAME=forever'],
      ['yearly=3d', 'unknown tier "yearly"'],
      ['daily=3d,daily=4d', 'tier "daily" given twice'],
      ['all=30d,', '"" is not NAME=<n>d or NAME=forever'],
      ['all=-1d', '"all=-1d" is not NAME=<n>d or NAME=forever'],
      ['on', '"on" is not NAME=<n>d or NAME=forever'],
    ] as const) {
      assert.throws(
        () => loadConfig({ HISTORY_RETENTION: raw }),
        (error: Error) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(
            error.message,
            `HISTORY_RETENTION must be "off" or tiers like "all=30d,daily=365d,weekly=forever" (${why}), got "${raw}"`,
          );
          return true;
        },
      );
    }
  });
});

describe('planPrune (which versions a policy deletes)', () => {
  const now = new Date('2026-11-18T12:00:00.000Z'); // a Wednesday
  let n = 0;
  const v = (created_at: string, label: string | null = null): RetentionCandidate => ({
    id: `id${++n}`,
    version: n,
    created_at,
    label,
  });
  const doomed = (versions: RetentionCandidate[], raw: string, current = n) =>
    planPrune(versions, current, now, policy(raw))
      .map((x) => x.created_at)
      .sort();

  test('all: younger than the duration is kept; exactly that old or older is not', () => {
    n = 0;
    const versions = [v('2026-11-17T12:00:00.000Z'), v('2026-11-17T12:00:00.001Z'), v('2026-11-18T11:00:00.000Z')];
    assert.deepEqual(doomed(versions, 'all=1d'), ['2026-11-17T12:00:00.000Z']);
  });

  test('hourly: the newest of each UTC hour, while younger than the tier', () => {
    n = 0;
    const versions = [
      v('2026-11-16T11:59:59.999Z'), // newest of its hour but older than 2d
      v('2026-11-16T12:10:00.000Z'),
      v('2026-11-16T12:59:59.999Z'), // one hour: the later stays
      v('2026-11-16T13:00:00.000Z'), // the next hour
      v('2026-11-18T11:30:00.000Z'), // current
    ];
    assert.deepEqual(doomed(versions, 'hourly=2d'), ['2026-11-16T11:59:59.999Z', '2026-11-16T12:10:00.000Z']);
  });

  test('daily: UTC midnight splits the buckets', () => {
    n = 0;
    const versions = [
      v('2026-11-10T00:00:00.000Z'),
      v('2026-11-10T23:59:59.999Z'),
      v('2026-11-11T00:00:00.000Z'),
      v('2026-11-18T11:00:00.000Z'),
    ];
    assert.deepEqual(doomed(versions, 'daily=30d'), ['2026-11-10T00:00:00.000Z']);
  });

  test('weekly: ISO weeks run Monday to Sunday', () => {
    n = 0;
    const versions = [
      v('2026-11-02T00:00:00.000Z'), // Monday
      v('2026-11-08T23:59:59.999Z'), // Sunday of the same week: newest of it
      v('2026-11-09T00:00:00.000Z'), // Monday: the next week
      v('2026-11-18T11:00:00.000Z'),
    ];
    assert.deepEqual(doomed(versions, 'weekly=forever'), ['2026-11-02T00:00:00.000Z']);
    // A week (bucket) starting 2026-12-28 belongs to 2026 and 2027 at once: still one bucket.
    n = 0;
    const turn = [v('2026-12-28T10:00:00.000Z'), v('2027-01-03T10:00:00.000Z')];
    assert.deepEqual(
      planPrune(turn, 99, new Date('2027-02-01T00:00:00.000Z'), policy('weekly=forever')).map((x) => x.version),
      [1],
    );
  });

  test('monthly: the newest of each calendar month; combined tiers keep the union', () => {
    n = 0;
    const versions = [
      v('2025-01-31T23:59:59.999Z'), // newest of January 2025, but older than 365d
      v('2026-01-01T00:00:00.000Z'),
      v('2026-01-31T23:59:59.999Z'),
      v('2026-02-01T00:00:00.000Z'),
      v('2026-11-01T00:00:00.000Z'),
      v('2026-11-17T00:00:00.000Z'),
      v('2026-11-18T11:00:00.000Z'),
    ];
    assert.deepEqual(doomed(versions, 'monthly=365d'), [
      '2025-01-31T23:59:59.999Z',
      '2026-01-01T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
      '2026-11-17T00:00:00.000Z',
    ]);
    assert.deepEqual(doomed(versions, 'all=1d,daily=30d,monthly=365d'), [
      '2025-01-31T23:59:59.999Z',
      '2026-01-01T00:00:00.000Z',
    ]);
  });

  test('the current version and labelled versions always survive', () => {
    n = 0;
    const versions = [
      v('2020-01-01T00:00:00.000Z', 'first draft'),
      v('2020-01-01T00:00:01.000Z'),
      v('2020-01-01T00:00:02.000Z'),
    ];
    assert.deepEqual(
      planPrune(versions, 2, now, policy('all=1d')).map((x) => x.version),
      [3],
    );
    assert.deepEqual(planPrune(versions, 3, now, policy('all=forever')), []);
  });

  test('versionRanges writes runs of numbers as ranges', () => {
    assert.equal(versionRanges([1, 2, 3, 5, 7, 8]), '1-3, 5, 7-8');
    assert.equal(versionRanges([4]), '4');
  });
});

forEachDatabase('history retention', (ctx) => {
  const api = notesClient(() => ctx.app);
  const now = new Date('2026-11-18T12:00:00.000Z');

  /** A note with one version per given time (oldest first), created over HTTP, its times then set. */
  async function noteWithHistory(s: Session, times: string[]): Promise<{ id: string; rows: VersionRow[] }> {
    const note = await api.createOk(s, { title: 'v1', content: 'one' });
    for (let i = 2; i <= times.length; i += 1)
      await api.addVersionOk(s, note.id, { title: `v${i}`, content: `text ${i}` });
    for (let i = 0; i < times.length; i += 1) {
      await ctx.database.db
        .updateTable('note_versions')
        .set({ created_at: times[i]! })
        .where('note_id', '=', note.id)
        .where('version', '=', i + 1)
        .execute();
    }
    return { id: note.id, rows: await api.history(s, note.id) };
  }
  const numbers = async (s: Session, id: string, query = '') =>
    okJson<VersionRow[]>(await api.versions(s, id, query)).map((r) => r.version);
  const label = (s: Session, id: string, versionId: string, value: string | null) =>
    ctx.app.inject({
      method: 'PATCH',
      url: `/api/notes/${id}/${versionId}`,
      headers: s.auth,
      payload: { label: value },
    });

  test('the hourly job prunes with the injected clock: labels and the current version survive, gaps page correctly, numbers are never reused', async () => {
    const s = await newSession(ctx.app);
    const days = (d: number) => new Date(now.getTime() - d * DAY).toISOString();
    const { id, rows } = await noteWithHistory(s, [
      days(40),
      days(39.5),
      days(20),
      days(10),
      days(9.9),
      days(0.5),
      days(0.2),
    ]);
    assert.equal(
      okJson<VersionRow>(await label(s, id, rows.find((r) => r.version === 2)!.id, 'kept by name')).label,
      'kept by name',
    );

    await ctx.rebuild({ HISTORY_RETENTION: 'all=1d,weekly=15d' });
    const outcomes = await runTasks(ctx.database, maintenanceTasks(ctx.config), now);
    const outcome = outcomes.find((o) => o.task === HISTORY_RETENTION_TASK);
    // 1: older than every tier; 3: newest of its week but older than 15d; 4: not the newest of its week.
    assert.deepEqual(outcome, {
      task: HISTORY_RETENTION_TASK,
      status: 'done',
      counts: { notes: 1, versions: 3 },
      summary: 'deleted 3 old versions of 1 note',
    });

    assert.deepEqual(await numbers(s, id), [7, 6, 5, 2]);
    assert.deepEqual(await numbers(s, id, '?limit=2'), [7, 6]);
    assert.deepEqual(await numbers(s, id, '?limit=2&offset=2'), [5, 2]);
    assert.deepEqual(await numbers(s, id, '?limit=1&offset=3'), [2]);
    assert.deepEqual(await numbers(s, id, '?limit=5&offset=4'), []);
    const pruned = rows.find((r) => r.version === 3)!;
    expectVersionNotFound(await api.version(s, id, pruned.id));

    // Nothing more to do on a second pass.
    assert.deepEqual(await pruneHistory(ctx.database.db, now, ctx.config.historyRetention), { notes: 0, versions: 0 });
    // The next save is number 8 even though 3 and 4 are free.
    await api.addVersionOk(s, id, { title: 'v8', content: 'eight' });
    assert.deepEqual(await numbers(s, id, '?limit=3'), [8, 7, 6]);
    assert.deepEqual(await numbers(s, id, '?offset=4'), [2]);
    await ctx.rebuild({});
  });

  test('off (the default) and all=forever delete nothing', async () => {
    const s = await newSession(ctx.app);
    const { id } = await noteWithHistory(s, ['2000-01-01T00:00:00.000Z', '2000-01-02T00:00:00.000Z']);
    assert.deepEqual(await runTask(ctx.database, maintenanceTasks(ctx.config)[0]!, now), {
      task: HISTORY_RETENTION_TASK,
      status: 'done',
      counts: { notes: 0, versions: 0 },
      summary: 'HISTORY_RETENTION is off; every version kept',
    });
    assert.deepEqual(await pruneHistory(ctx.database.db, now, policy('all=forever,daily=1d')), {
      notes: 0,
      versions: 0,
    });
    assert.deepEqual(await numbers(s, id), [2, 1]);
  });

  test('pages of a long pruned history count the versions that remain', async () => {
    const s = await newSession(ctx.app);
    const times = Array.from({ length: 30 }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString());
    const { id, rows } = await noteWithHistory(s, times);
    for (const row of rows.filter((r) => r.version % 7 === 0)) await label(s, id, row.id, `week ${row.version / 7}`);
    const deleted = new Map<string, number[]>();
    await pruneHistory(ctx.database.db, now, policy('all=1d'), (noteId, versions) => deleted.set(noteId, versions));
    assert.deepEqual(
      deleted.get(id),
      [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 29],
    );
    const all = await numbers(s, id, '?limit=100');
    assert.deepEqual(all, [30, 28, 21, 14, 7]);
    for (let offset = 0; offset <= 5; offset += 1) {
      assert.deepEqual(await numbers(s, id, `?limit=2&offset=${offset}`), all.slice(offset, offset + 2));
    }
  });

  // PostgreSQL keeps deleted index entries until a vacuum; deep pages would visit each one.
  if (ctx.kind === 'postgres')
    test('a prune that deleted versions vacuums the history table; one that deleted nothing does not', async () => {
      const lastVacuum = async () =>
        (
          await sql<{ at: string | null }>`
      select last_vacuum::text as at from pg_stat_user_tables
      where relname = 'note_versions' and schemaname = current_schema()`.execute(ctx.database.db)
        ).rows[0]?.at ?? null;
      const s = await newSession(ctx.app);
      await noteWithHistory(s, ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']);
      await pruneHistory(ctx.database.db, now, policy('all=1d'));
      const first = await lastVacuum();
      assert.notEqual(first, null);
      assert.deepEqual(await pruneHistory(ctx.database.db, now, policy('all=1d')), { notes: 0, versions: 0 });
      assert.equal(await lastVacuum(), first);
    });

  // Several instances share one database only on PostgreSQL.
  if (ctx.kind === 'postgres')
    test('two instances pruning at once delete each version once, and count it once', async () => {
      const s = await newSession(ctx.app);
      const notes: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        notes.push(
          (
            await noteWithHistory(s, [
              '2026-01-01T00:00:00.000Z',
              '2026-01-02T00:00:00.000Z',
              '2026-01-03T00:00:00.000Z',
              '2026-01-04T00:00:00.000Z',
            ])
          ).id,
        );
      }
      const other = openDatabase(ctx.config.database);
      try {
        const retention: HistoryRetention = policy('all=1d');
        // Straight to the function, past the runner's lock: the delete itself must not double-count.
        const deleted = new Map<string, number[]>();
        const record = (noteId: string, versions: number[]) =>
          deleted.set(noteId, [...(deleted.get(noteId) ?? []), ...versions]);
        await Promise.all([
          pruneHistory(ctx.database.db, now, retention, record),
          pruneHistory(other.db, now, retention, record),
        ]);
        for (const id of notes) assert.deepEqual(deleted.get(id)?.sort(), [1, 2, 3]);
        const rows = await ctx.database.db
          .selectFrom('notes')
          .select(['id', 'pruned'])
          .where('id', 'in', notes)
          .execute();
        for (const row of rows) assert.equal(row.pruned, 3);
        // Through the runner, the second instance skips while the first holds the lock.
        for (const id of notes) assert.deepEqual(await numbers(s, id), [4]);
        const outcomes = await Promise.all([
          runTask(
            ctx.database,
            { name: HISTORY_RETENTION_TASK, run: async (db, at) => ({ ...(await pruneHistory(db, at, retention)) }) },
            now,
          ),
          runTask(
            other,
            { name: HISTORY_RETENTION_TASK, run: async (db, at) => ({ ...(await pruneHistory(db, at, retention)) }) },
            now,
          ),
        ]);
        assert.ok(outcomes.every((o) => o.status === 'done' || o.status === 'skipped'));
      } finally {
        await other.close();
      }
    });
});
