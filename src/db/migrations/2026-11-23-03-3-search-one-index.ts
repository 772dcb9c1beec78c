// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * One search index instead of two. Every version is indexed once, when it is written, and current
 * search is that index joined to each note's current version: keeping a second index of current
 * versions rewrote an FTS entry on every save and made a save about twice as expensive as the
 * history entry alone (BENCHMARKS.md, "Search").
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop table search_current`.execute(db);
    // Write order, for history search's newest-first candidates (SQLite has its rowids).
    await sql`alter table search_history add column seq bigint generated always as identity`.execute(db);
    await sql`create index search_history_owner_seq on search_history (owner_id, seq desc)`.execute(db);
    await sql`drop index search_history_owner`.execute(db);
    return;
  }
  await sql`drop trigger search_note_keys_delete`.execute(db);
  await sql`drop table search_note_keys`.execute(db);
  await sql`drop table search_current`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create index search_history_owner on search_history (owner_id)`.execute(db);
    await sql`drop index search_history_owner_seq`.execute(db);
    await sql`alter table search_history drop column seq`.execute(db);
    await sql`create table search_current (
      note_id uuid primary key references notes (id) on delete cascade,
      owner_id uuid not null,
      tsv tsvector not null)`.execute(db);
    await sql`create index search_current_tsv on search_current using gin (tsv)`.execute(db);
    await sql`create index search_current_owner on search_current (owner_id)`.execute(db);
    return;
  }
  await sql`create table search_note_keys (
    id integer primary key,
    note_id text not null unique references notes (id) on delete cascade)`.execute(db);
  await sql
    .raw(
      `create virtual table search_current using fts5(owner, title, body, tokenize = 'ascii', content = '', contentless_delete = 1)`,
    )
    .execute(db);
  await sql`create trigger search_note_keys_delete after delete on search_note_keys
    begin delete from search_current where rowid = old.id; end`.execute(db);
}
