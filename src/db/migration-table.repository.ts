import { sql, type Kysely } from 'kysely';

/**
 * Kysely's migration table, `kysely_migration` (name, timestamp): databases migrated by earlier
 * builds (through Kysely's Migrator) carry on with it (migrate.ts).
 */
export async function ensureMigrationTable(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(
    db,
  );
}

/** The names of the migrations applied; throws if the table does not exist. */
export async function appliedMigrationNames(db: Kysely<any>): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return new Set(rows.map((row) => row.name));
}

export async function recordMigration(db: Kysely<any>, name: string, at: Date): Promise<void> {
  await sql`insert into kysely_migration (name, timestamp) values (${name}, ${at.toISOString()})`.execute(db);
}
