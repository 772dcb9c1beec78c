// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: archived notes leave the usual search, so `search_current` (the index entries current
 * search keeps, 2026-11-23-06-1) now holds only notes outside the trash and not archived. The
 * triggers are recreated with that condition, and archiving moves a note out and back like the
 * trash. PostgreSQL's search joins the notes table and filters there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop trigger search_current_moved`.execute(db);
  await sql`drop trigger search_current_indexed`.execute(db);
  await sql`create trigger search_current_indexed after insert on search_version_keys
    when exists (select 1 from notes where id = new.note_id and version_id = new.version_id and deleted_at is null and archived = 0)
    begin insert or ignore into search_current (key) values (new.id); end`.execute(db);
  await sql`create trigger search_current_moved after update of version_id, deleted_at, archived on notes
    begin
      delete from search_current where key = (select id from search_version_keys where version_id = old.version_id);
      insert or ignore into search_current (key)
        select id from search_version_keys where version_id = new.version_id and new.deleted_at is null and new.archived = 0;
    end`.execute(db);
  await sql`delete from search_current where key in (
    select k.id from search_version_keys k join notes n on n.version_id = k.version_id where n.archived = 1)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop trigger search_current_moved`.execute(db);
  await sql`drop trigger search_current_indexed`.execute(db);
  await sql`create trigger search_current_indexed after insert on search_version_keys
    when exists (select 1 from notes where id = new.note_id and version_id = new.version_id and deleted_at is null)
    begin insert or ignore into search_current (key) values (new.id); end`.execute(db);
  await sql`create trigger search_current_moved after update of version_id, deleted_at on notes
    begin
      delete from search_current where key = (select id from search_version_keys where version_id = old.version_id);
      insert or ignore into search_current (key)
        select id from search_version_keys where version_id = new.version_id and new.deleted_at is null;
    end`.execute(db);
  await sql`insert or ignore into search_current (key)
    select k.id from notes n join search_version_keys k on k.version_id = n.version_id where n.deleted_at is null`.execute(
    db,
  );
}
