import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export type DatabaseKind = 'sqlite' | 'postgres';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;

/** The databases every storage test runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const databaseKinds: DatabaseKind[] = TEST_DATABASE_URL === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * Databases already migrated to the latest schema, made once per run by scripts/test.mjs: a SQLite
 * file (VELLUM_TEST_SQLITE_TEMPLATE) and a PostgreSQL database (VELLUM_TEST_PG_TEMPLATE). A migrated
 * scratch database is a copy of one (a file copy; CREATE DATABASE … TEMPLATE), not 24 migrations run
 * again: on PostgreSQL that was ~1.7 s a suite. Without them (a test run some other way) the caller's
 * migrateToLatest does the work.
 */
const SQLITE_TEMPLATE = process.env.VELLUM_TEST_SQLITE_TEMPLATE || undefined;
const PG_TEMPLATE = process.env.VELLUM_TEST_PG_TEMPLATE || undefined;

/**
 * A new database of the given kind, owned by one test file or test: empty, or with `migrated`, at
 * the latest schema when the run made a template (see above; the caller still runs migrateToLatest,
 * which then finds nothing to do).
 */
export async function createScratchDatabase(
  kind: DatabaseKind,
  { migrated = false }: { migrated?: boolean } = {},
): Promise<ScratchDatabase> {
  const name = `vellum_test_${randomBytes(6).toString('hex')}`;
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-test-'));
    if (migrated && SQLITE_TEMPLATE !== undefined) fs.copyFileSync(SQLITE_TEMPLATE, path.join(dir, `${name}.db`));
    return {
      url: `sqlite:${path.join(dir, `${name}.db`)}`,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (TEST_DATABASE_URL === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(
    migrated && PG_TEMPLATE !== undefined
      ? `CREATE DATABASE ${name} TEMPLATE ${PG_TEMPLATE}`
      : `CREATE DATABASE ${name}`,
  );
  // A commit waits for nothing on disk here: fdatasync per commit was ~5 ms on the CI machine
  // (2,000 commits: 9.4-11.5 s on, 0.3-0.8 s off), and the suite makes tens of thousands. Nothing is
  // lost but by an operating-system crash, which no test makes; what the tests kill is the app.
  await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
