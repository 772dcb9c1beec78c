// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';

/**
 * An index on the owner's folders (issue #37). The folder limit counts them on every create, and
 * export reads them a page at a time by id; the two name indexes are partial (top level, and
 * below it), so on PostgreSQL a plain `owner_id =` query scanned every account's folders.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index folders_owner on folders (owner_id, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index folders_owner`.execute(db);
}
