// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: one statement indexes a version. Inserting into this view writes the entry's key and its
 * FTS5 row (keyed by the new key) in a trigger, where the application used two statements and read
 * the key back in between; each statement through the driver cost about as much as the key
 * insert itself (BENCHMARKS.md, "Search"). The view reads as the keys table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create view search_entries (version_id, note_id, version, owner, title, body) as
    select version_id, note_id, version, null, null, null from search_version_keys`.execute(db);
  // Within a trigger, last_insert_rowid() is the key just inserted (the marker trigger that insert
  // fires restores it when it ends).
  await sql`create trigger search_entries_insert instead of insert on search_entries
    begin
      insert into search_version_keys (version_id, note_id, version) values (new.version_id, new.note_id, new.version);
      insert into search_history (rowid, owner, title, body) values (last_insert_rowid(), new.owner, new.title, new.body);
    end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop trigger search_entries_insert`.execute(db);
  await sql`drop view search_entries`.execute(db);
}
