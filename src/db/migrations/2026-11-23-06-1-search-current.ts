// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: which index entries are the current version of a note outside the trash. Current search
 * keeps the FTS5 matches found here (an integer key look-up each) instead of joining every
 * matching version to its note, so it no longer pays for old versions nor for the notes table.
 * Triggers keep it, so every writer (saves, restores, imports, the trash, the index back-fill)
 * does without knowing; entries leave with their index key through the foreign key. Filled here
 * from the existing notes: no text is needed. PostgreSQL keeps joining the notes table (its
 * current search was not the slow one; see BENCHMARKS.md, "Search").
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create table search_current (
    key integer primary key references search_version_keys (id) on delete cascade)`.execute(db);
  // An entry is current when its note points at its version: a new note, a save (the note is
  // advanced before its version is indexed), an import (notes are written with their last version).
  await sql`create trigger search_current_indexed after insert on search_version_keys
    when exists (select 1 from notes where id = new.note_id and version_id = new.version_id and deleted_at is null)
    begin insert or ignore into search_current (key) values (new.id); end`.execute(db);
  // A save moves the note to a version indexed just after; the trash takes the note out, a restore
  // puts its current version back.
  await sql`create trigger search_current_moved after update of version_id, deleted_at on notes
    begin
      delete from search_current where key = (select id from search_version_keys where version_id = old.version_id);
      insert or ignore into search_current (key)
        select id from search_version_keys where version_id = new.version_id and new.deleted_at is null;
    end`.execute(db);
  await sql`insert into search_current (key)
    select k.id from notes n join search_version_keys k on k.version_id = n.version_id where n.deleted_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop trigger search_current_moved`.execute(db);
  await sql`drop trigger search_current_indexed`.execute(db);
  await sql`drop table search_current`.execute(db);
}
