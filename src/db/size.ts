import fs from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { DatabaseConfig } from '../config.js';

/** Whether databaseSize gives the free bytes of the database's file system: SQLite's file only. */
export const reportsDiskFree = (config: DatabaseConfig): boolean => config.kind === 'sqlite';

/** How much the database takes, and for SQLite how much its file system has left (/metrics). */
export async function databaseSize(
  config: DatabaseConfig,
  db: Kysely<any>,
): Promise<{ bytes: number; diskFreeBytes?: number }> {
  if (config.kind === 'postgres') {
    const { rows } = await sql<{
      bytes: number | string;
    }>`select pg_database_size(current_database()) as bytes`.execute(db);
    return { bytes: Number(rows[0]?.bytes ?? 0) };
  }
  if (config.filename === ':memory:') return { bytes: 0 };
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += fs.statSync(config.filename + suffix).size;
    } catch {
      // No WAL right now.
    }
  }
  const disk = fs.statfsSync(path.dirname(config.filename));
  return { bytes, diskFreeBytes: disk.bavail * disk.bsize };
}
