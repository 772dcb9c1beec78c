import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { DatabaseConfig } from '../config.js';
import { knownMigrations } from '../db/migrate.js';
import { CommandError } from './commands.js';
import { restorePostgres } from './restore-postgres.js';

/**
 * `vellum backup FILE` and `vellum restore FILE` for the embedded SQLite database. Neither opens
 * the database through the app, so neither migrates it: a backup taken before an upgrade is the
 * schema the old version runs, and is what a rollback restores.
 *
 * On PostgreSQL, pg_dump backs up and `vellum restore` restores through pg_restore (restore-postgres.ts).
 */

function sqliteFile(database: DatabaseConfig, command: string): string {
  if (database.kind === 'postgres') {
    throw new CommandError(
      `${command} is for the embedded SQLite database; DATABASE_URL is PostgreSQL: back up with pg_dump -Fc, restore with vellum restore (docs/operations.md, "Back up")`,
    );
  }
  if (database.filename === ':memory:')
    throw new CommandError(`${command}: sqlite::memory: has nothing to back up or restore`);
  return database.filename;
}

export interface BackupSummary {
  file: string;
  bytes: number;
  notes: number;
  versions: number;
}

/**
 * A consistent copy of a running database: VACUUM INTO reads one snapshot (a read transaction,
 * which in WAL mode never blocks the server's writers nor is blocked by them) and writes it as a
 * single self-contained file, with what is still in the -wal file included. Copying vellum.db
 * itself is not a backup: recent writes live in vellum.db-wal until a checkpoint. The copy is
 * written next to FILE and renamed into place once it passes PRAGMA integrity_check, so FILE is
 * never a half-written backup.
 */
export function backupSqlite(database: DatabaseConfig, target: string): BackupSummary {
  const source = sqliteFile(database, 'backup');
  if (!fs.existsSync(source)) throw new CommandError(`no database at ${source}`);
  const file = path.resolve(target);
  if (fs.existsSync(file)) throw new CommandError(`${file} already exists; choose a new file name`);
  const partial = `${file}.partial-${process.pid}`;
  const db = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw new CommandError(`backup failed: ${(error as Error).message}`);
  } finally {
    db.close();
  }
  try {
    const summary = checkCopy(partial, 'the new backup');
    fs.renameSync(partial, file);
    return { file, bytes: fs.statSync(file).size, ...summary };
  } finally {
    fs.rmSync(partial, { force: true });
  }
}

/** Opens a copy read-only: intact, a Vellum database, from this version or an older one. */
function checkCopy(file: string, what: string): { notes: number; versions: number } {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new CommandError(`${what} cannot be opened: ${(error as Error).message}`);
  }
  try {
    return checkOpened(db, what);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    // A file that is not SQLite at all (a dump of another kind, text, a truncated copy): said in a
    // line, not a stack trace (issue #43).
    throw new CommandError(`${what} is not a readable SQLite database: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

function checkOpened(db: BetterSqlite3.Database, what: string): { notes: number; versions: number } {
  const check = db.pragma('integrity_check', { simple: true });
  if (check !== 'ok') throw new CommandError(`${what} fails PRAGMA integrity_check: ${String(check)}`);
  const hasMigrations = db
    .prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'")
    .get();
  if (hasMigrations === undefined)
    throw new CommandError(`${what} is not a Vellum database (no kysely_migration table)`);
  const applied = (db.prepare('select name from kysely_migration').all() as Array<{ name: string }>).map((r) => r.name);
  const unknown = applied.filter((name) => !knownMigrations.includes(name));
  if (unknown.length > 0) {
    throw new CommandError(
      `${what} was written by a newer Vellum (migrations ${unknown.join(', ')}); restore it with that version, or an older backup with this one`,
    );
  }
  const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
  return { notes: count('notes'), versions: count('note_versions') };
}

export interface RestoreSummary {
  file: string;
  database: string;
  /** Where the database that was replaced now is, if there was one. */
  previous: string | undefined;
  notes: number;
  versions: number;
}

/**
 * Replaces the database with a backup, for an instance that is stopped. A running server holds the
 * database open; leaving WAL mode needs the only connection, so PRAGMA journal_mode = DELETE
 * failing with "database is locked" means some process still has it open, and restore refuses
 * (the service must be stopped: replacing the file under it would lose whatever it writes next and
 * could corrupt it). That also checkpoints a -wal left by a crash into the old file, which is kept
 * beside it as DATABASE.before-restore-TIMESTAMP rather than deleted.
 */
export function restoreSqlite(database: DatabaseConfig, backup: string, now = new Date()): RestoreSummary {
  const target = sqliteFile(database, 'restore');
  const file = path.resolve(backup);
  if (!fs.existsSync(file)) throw new CommandError(`no backup at ${file}`);
  const summary = checkCopy(file, 'the backup');
  let previous: string | undefined;
  if (fs.existsSync(target)) {
    const db = new BetterSqlite3(target, { fileMustExist: true });
    try {
      db.pragma('journal_mode = DELETE');
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY') === true) {
        throw new CommandError(`${target} is in use: stop every Vellum process that uses it, then run restore again`);
      }
      throw error;
    } finally {
      db.close();
    }
    previous = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(target, previous);
  } else {
    fs.mkdirSync(path.dirname(target), { recursive: true });
  }
  // Copied beside the target, then renamed: the database file is either the old one or the whole backup.
  const partial = `${target}.restoring-${process.pid}`;
  fs.copyFileSync(file, partial);
  fs.renameSync(partial, target);
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${target}${suffix}`, { force: true });
  return { file, database: target, previous, ...summary };
}

/** `vellum restore FILE`: the SQLite file copy above, or PostgreSQL's restore into a new database. */
export async function restoreDatabase(database: DatabaseConfig, backup: string): Promise<RestoreSummary> {
  return database.kind === 'postgres' ? restorePostgres(database.url, backup) : restoreSqlite(database, backup);
}
