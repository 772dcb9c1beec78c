import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './database.js';
import { migrateToLatest, pendingMigrations, type MigrateHooks } from './migrate.js';

export interface UpgradeOptions {
  config: DatabaseConfig;
  log: FastifyBaseLogger;
  /** True once SIGTERM/SIGINT came: the migration in progress commits, no further one starts. */
  shouldStop: () => boolean;
  /** Tests only (TEST_PAUSE_AT): named points of the upgrade. */
  pause?: (point: string) => Promise<void>;
}

export interface UpgradeResult {
  applied: string[];
  /** The copy taken before a SQLite schema upgrade, if one was taken. */
  snapshot?: string;
}

/**
 * Brings the schema up to date at start-up. Before a SQLite database that already holds data takes
 * new migrations, `VACUUM INTO` copies it beside itself (`<file>.pre-upgrade-<time>.db`, path
 * logged): a consistent copy taken while other processes may still read and write. It is removed by
 * the next successful start after this one (removeOldSnapshots). Migrations themselves run one
 * transaction each under a lock (migrate.ts), so a kill at any point leaves a database that starts.
 */
export async function upgradeDatabase(
  database: Database,
  { config, log, shouldStop, pause }: UpgradeOptions,
): Promise<UpgradeResult> {
  const pending = await pendingMigrations(database.db);
  if (pending.length === 0) return { applied: [] };
  let snapshot: string | undefined;
  if (config.kind === 'sqlite' && config.filename !== ':memory:' && (await holdsData(database))) {
    snapshot = snapshotPath(config.filename, new Date());
    log.info({ snapshot, pending: pending.length }, `copying the database to ${snapshot} before upgrading its schema`);
    await sql`vacuum into ${snapshot}`.execute(database.db);
    log.warn(
      { snapshot },
      `database copied before the schema upgrade to ${snapshot}; it is removed at the next successful start (restore it with \`vellum restore\` if this upgrade goes wrong)`,
    );
    await pause?.('snapshot');
  }
  const hooks: MigrateHooks = {
    shouldStop,
    ...(pause === undefined ? {} : { pause }),
    onWait: () => {
      log.info('another process is migrating the database; waiting for it');
      // SQLite waits for the lock with the event loop blocked: write the line out now.
      (log as { flush?: () => void }).flush?.();
    },
  };
  const applied = await migrateToLatest(database.db, hooks);
  return { applied, ...(snapshot === undefined ? {} : { snapshot }) };
}

/** A database some earlier build migrated: it has a migration table with rows. */
async function holdsData(database: Database): Promise<boolean> {
  try {
    const { rows } = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(database.db);
    return Number(rows[0]?.n ?? 0) > 0;
  } catch {
    return false;
  }
}

const SNAPSHOT_INFIX = '.pre-upgrade-';

export function snapshotPath(filename: string, at: Date): string {
  return `${filename}${SNAPSHOT_INFIX}${at.toISOString().replace(/[:.]/g, '-')}-${process.pid}.db`;
}

/** The pre-upgrade copies of `filename` that exist now. */
export function listSnapshots(filename: string): string[] {
  const dir = path.dirname(filename);
  const prefix = path.basename(filename) + SNAPSHOT_INFIX;
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => name.startsWith(prefix) && name.endsWith('.db'))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/**
 * After a successful start: removes the copies taken before `since` (by an earlier start, which this
 * one has now shown to have left a working database). A copy taken by this start, or by another
 * instance starting alongside, is newer and stays until the next one.
 */
export function removeOldSnapshots(config: DatabaseConfig, since: Date, log: FastifyBaseLogger): void {
  if (config.kind !== 'sqlite' || config.filename === ':memory:') return;
  for (const file of listSnapshots(config.filename)) {
    try {
      if (fs.statSync(file).mtimeMs >= since.getTime()) continue;
      fs.rmSync(file, { force: true });
      log.info({ snapshot: file }, `removed the pre-upgrade copy ${file}: the upgraded database started`);
    } catch (error) {
      log.warn({ err: error, snapshot: file }, 'could not remove a pre-upgrade copy');
    }
  }
}
