// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Full-text search. The application folds and splits text into terms (src/search/text.ts); the
 * engines only index those terms. Two indexes: the current version of every note (rewritten on
 * each save) and every version ever saved (written once, when the version is; it never changes).
 * Entries go with their note or version through foreign keys, so trash purges, account deletion
 * and history retention keep the indexes exact without knowing about them. Existing notes are
 * indexed by the search-index maintenance task at start-up.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create table search_current (
      note_id uuid primary key references notes (id) on delete cascade,
      owner_id uuid not null,
      tsv tsvector not null)`.execute(db);
    await sql`create index search_current_tsv on search_current using gin (tsv)`.execute(db);
    await sql`create index search_current_owner on search_current (owner_id)`.execute(db);
    await sql`create table search_history (
      version_id uuid primary key references note_versions (id) on delete cascade,
      note_id uuid not null,
      owner_id uuid not null,
      version integer not null,
      tsv tsvector not null)`.execute(db);
    await sql`create index search_history_tsv on search_history using gin (tsv)`.execute(db);
    await sql`create index search_history_owner on search_history (owner_id)`.execute(db);
    return;
  }
  // FTS5 rows are keyed by integers; these tables give notes and versions one, and their delete
  // triggers remove the FTS rows when a cascade removes the key.
  await sql`create table search_note_keys (
    id integer primary key,
    note_id text not null unique references notes (id) on delete cascade)`.execute(db);
  await sql`create table search_version_keys (
    id integer primary key,
    version_id text not null unique references note_versions (id) on delete cascade,
    note_id text not null,
    version integer not null)`.execute(db);
  // Contentless: the text lives in note_versions already. `ascii` splits on the spaces between
  // the application's terms and leaves them as they are.
  for (const table of ['search_current', 'search_history']) {
    await sql
      .raw(
        `create virtual table ${table} using fts5(owner, title, body, tokenize = 'ascii', content = '', contentless_delete = 1)`,
      )
      .execute(db);
  }
  await sql`create trigger search_note_keys_delete after delete on search_note_keys
    begin delete from search_current where rowid = old.id; end`.execute(db);
  await sql`create trigger search_version_keys_delete after delete on search_version_keys
    begin delete from search_history where rowid = old.id; end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop table search_history`.execute(db);
    await sql`drop table search_current`.execute(db);
    return;
  }
  for (const name of ['search_version_keys', 'search_note_keys', 'search_history', 'search_current']) {
    await sql.raw(`drop table ${name}`).execute(db);
  }
}
