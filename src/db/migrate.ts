import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { isPostgres } from './dialect.js';
import { appliedMigrationNames, ensureMigrationTable, recordMigration } from './migration-table.repository.js';
import * as accounts from './migrations/2026-11-22-01-accounts.js';
import * as notes from './migrations/2026-11-22-02-notes.js';
import * as authEvents from './migrations/2026-11-22-03-auth-events.js';
import * as versionMetadata from './migrations/2026-11-23-02-1-version-metadata.js';
import * as trash from './migrations/2026-11-23-03-1-trash.js';
import * as search from './migrations/2026-11-23-03-2-search.js';
import * as searchOneIndex from './migrations/2026-11-23-03-3-search-one-index.js';
import * as searchCurrent from './migrations/2026-11-23-06-1-search-current.js';
import * as searchEntryView from './migrations/2026-11-23-06-2-search-entry-view.js';
import * as sessionGeneration from './migrations/2026-11-23-01-1-session-generation.js';
import * as exportOrder from './migrations/2026-11-24-19-a-export-order.js';
import * as maintenanceRuns from './migrations/2026-11-24-26-f-maintenance-runs.js';
import * as organise from './migrations/2026-11-24-31-a-organise.js';
import * as searchUnarchived from './migrations/2026-11-24-31-b-search-unarchived.js';
import * as secondFactor from './migrations/2026-11-25-32-a-second-factor.js';
import * as attachments from './migrations/2026-11-25-32-b-attachments.js';
import * as accessTokens from './migrations/2026-11-25-32-c-access-tokens.js';
import * as shares from './migrations/2026-11-25-32-d-shares.js';
import * as webdav from './migrations/2026-11-25-33-a-webdav.js';
import * as members from './migrations/2026-11-25-33-b-members.js';
import * as saveFunction from './migrations/2026-11-25-34-a-save-function.js';
import * as sessionAccessToken from './migrations/2026-11-26-36-a-session-access-token.js';
import * as foldersOwner from './migrations/2026-11-26-37-f-folders-owner.js';
import * as accessJtiIndex from './migrations/2026-11-26-37-s-access-jti-index.js';
import * as teamsA from './migrations/2026-11-26-40-t-teams-a.js';
import * as teamsSsoReset from './migrations/2026-11-26-40-u-teams-b-sso-reset.js';
import * as collabServer from './migrations/2026-11-26-40-c-collab-server.js';
import * as teams2 from './migrations/2026-11-27-51-t-teams2.js';
import * as tagsSettled from './migrations/2026-11-27-81-o-ops3.js';

// Listed here rather than read from disk so the same code runs from src (tsx) and from dist.
const migrations: Record<string, Migration> = {
  '2026-11-22-01-accounts': accounts,
  '2026-11-22-02-notes': notes,
  '2026-11-22-03-auth-events': authEvents,
  '2026-11-23-02-1-version-metadata': versionMetadata,
  '2026-11-23-03-1-trash': trash,
  '2026-11-23-03-2-search': search,
  '2026-11-23-03-3-search-one-index': searchOneIndex,
  '2026-11-23-01-1-session-generation': sessionGeneration,
  '2026-11-23-06-1-search-current': searchCurrent,
  '2026-11-23-06-2-search-entry-view': searchEntryView,
  '2026-11-24-19-a-export-order': exportOrder,
  '2026-11-24-26-f-maintenance-runs': maintenanceRuns,
  '2026-11-24-31-a-organise': organise,
  '2026-11-24-31-b-search-unarchived': searchUnarchived,
  '2026-11-25-32-a-second-factor': secondFactor,
  '2026-11-25-32-b-attachments': attachments,
  '2026-11-25-32-c-access-tokens': accessTokens,
  '2026-11-25-32-d-shares': shares,
  '2026-11-25-33-a-webdav': webdav,
  '2026-11-25-33-b-members': members,
  '2026-11-25-34-a-save-function': saveFunction,
  '2026-11-26-36-a-session-access-token': sessionAccessToken,
  '2026-11-26-37-f-folders-owner': foldersOwner,
  '2026-11-26-37-s-access-jti-index': accessJtiIndex,
  '2026-11-26-40-t-teams-a': teamsA,
  '2026-11-26-40-u-teams-b-sso-reset': teamsSsoReset,
  '2026-11-26-40-c-collab-server': collabServer,
  '2026-11-27-51-t-teams2': teams2,
  '2026-11-27-81-o-ops3': tagsSettled,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Kysely's migrator: tests use it to stop a database at an older schema (`migrateTo`). */
export function createMigrator(db: Kysely<any>): Migrator {
  // Features landed in parallel with dated names that do not sort in landing order; each only adds
  // columns, tables or indexes of its own, so a database that has later ones may apply earlier ones.
  return new Migrator({ db, provider, allowUnorderedMigrations: true });
}

export interface MigrateHooks {
  /** Asked before each migration: true stops the run (SIGTERM during an upgrade) after the last commit. */
  shouldStop?: () => boolean;
  /** Tests only: called at named points (`migration:NAME` just before its commit, `snapshot`). */
  pause?: (point: string) => Promise<void>;
  /** Told once when another process holds the migration lock and this one waits for it. */
  onWait?: () => void;
}

/**
 * Applies every pending migration, each in a transaction of its own, and returns their names (throws
 * with the failing migration's name). The table is Kysely's (`kysely_migration`), so databases
 * migrated by earlier builds carry on.
 *
 * Each transaction first takes the migration lock — PostgreSQL: a transaction-scoped advisory lock;
 * SQLite: `BEGIN IMMEDIATE`, the database's write lock — and only then reads which migrations are
 * applied, so instances starting together take turns and none applies one twice. A process killed
 * mid-migration leaves that migration rolled back (SQLite's DDL is transactional like PostgreSQL's):
 * the next start applies it again from the start. Kysely's own migrator ran SQLite's outside any
 * transaction, and a kill mid-upgrade left half a migration behind for good (issue #43).
 */
export async function migrateToLatest(db: Kysely<any>, hooks: MigrateHooks = {}): Promise<string[]> {
  const names = Object.keys(migrations).sort();
  const applied: string[] = [];
  for (;;) {
    if (hooks.shouldStop?.() === true) return applied;
    let current: string | undefined;
    try {
      const done = await inMigrationTransaction(db, hooks, async (trx) => {
        const have = await appliedMigrationNames(trx);
        current = names.find((name) => !have.has(name));
        if (current === undefined) return true;
        await migrations[current]!.up(trx);
        await recordMigration(trx, current, new Date());
        await hooks.pause?.(`migration:${current}`);
        return false;
      });
      if (done) return applied;
      applied.push(current!);
    } catch (error) {
      throw new MigrationError(current, error);
    }
  }
}

export class MigrationError extends Error {
  constructor(
    readonly migration: string | undefined,
    cause: unknown,
  ) {
    super(`migration ${migration ?? '(set-up)'} failed: ${String(cause)}`, { cause });
  }
}

const LOCK_NAME = 'vellum:migrations';

async function inMigrationTransaction<T>(
  db: Kysely<any>,
  hooks: MigrateHooks,
  body: (trx: Kysely<any>) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (conn) => {
    if (isPostgres(conn)) {
      await sql`begin`.execute(conn);
    } else {
      await beginImmediate(conn, hooks);
    }
    try {
      if (isPostgres(conn)) {
        // A migration may rightly run long (an index on a large table): no DATABASE_QUERY_TIMEOUT_SECONDS.
        await sql.raw('set local statement_timeout = 0').execute(conn);
        await advisoryXactLock(conn, hooks);
      }
      await ensureMigrationTable(conn);
      const result = await body(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw error;
    }
  });
}

/**
 * PostgreSQL's migration lock, held to the end of the transaction. Taken at once when free; else
 * this process says so (onWait, as on SQLite: a replica waiting for another's upgrade used to log
 * nothing on PostgreSQL) and waits however long the other takes (no statement time-out here).
 */
async function advisoryXactLock(conn: Kysely<any>, hooks: MigrateHooks): Promise<void> {
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(hashtextextended(${LOCK_NAME}, 0)) as locked`.execute(conn);
  if (rows[0]?.locked === true) return;
  hooks.onWait?.();
  await sql`select pg_advisory_xact_lock(hashtextextended(${LOCK_NAME}, 0))`.execute(conn);
}

/** SQLite's write lock; while another process migrates, waits (busy_timeout at a time) until it is free. */
async function beginImmediate(conn: Kysely<any>, hooks: MigrateHooks): Promise<void> {
  let told = false;
  for (;;) {
    try {
      await sql`begin immediate`.execute(conn);
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
      if (!told) hooks.onWait?.();
      told = true;
      // better-sqlite3 waited busy_timeout with the event loop blocked: let signals and log writes through.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Names of the migrations this build knows that `db` lacks (all of them for a new database). */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  let have: Set<string>;
  try {
    have = await appliedMigrationNames(db);
  } catch {
    have = new Set();
  }
  return Object.keys(migrations)
    .sort()
    .filter((name) => !have.has(name));
}

export const latestMigration = Object.keys(migrations).sort().at(-1);

/** Every migration this build knows (a database with others was written by a newer build). */
export const knownMigrations: readonly string[] = Object.keys(migrations);
