// Used by migrations: keep what each name produces unchanged, or old migrations would change.
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * Column types per dialect for migrations. Values read back the same on both (sqlite.ts,
 * postgres.ts): timestamps as the app's ISO strings, booleans as booleans, `utf8` as strings.
 */
export function dialectTypes(db: Kysely<any>) {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    pg,
    uuid: pg ? 'uuid' : 'text',
    /** Millisecond precision; SQLite stores the app's ISO-8601 string, which sorts by time. */
    timestamp: pg ? 'timestamptz(3)' : 'text',
    /** SQLite stores 0/1; the declared type `boolean` is what tells its row mapping to convert. */
    boolean: 'boolean',
    /** Text that may hold NUL (PostgreSQL text cannot): stored as its UTF-8 bytes, read as a string. */
    utf8: pg ? 'bytea' : 'blob',
    bigint: pg ? 'bigint' : 'integer',
    /** Default values of a boolean column. */
    false: (pg ? sql`false` : sql`0`) as RawBuilder<unknown>,
    true: (pg ? sql`true` : sql`1`) as RawBuilder<unknown>,
  } as const;
}
