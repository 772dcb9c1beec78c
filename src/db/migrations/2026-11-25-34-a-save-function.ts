// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: a save, and a new note, as one call each (src/notes/save.postgres.ts), so each is one
 * round trip. A save's statements run one after another inside the call, each with a fresh
 * snapshot: the first locks the note's row, so what follows sees every save committed before it
 * (one statement of CTEs would not — its sub-statements share a snapshot taken before waiting for
 * the lock, and under concurrent saves stale tag rows survived). Nothing on SQLite, where a save is a transaction of
 * statements on the app's own connection. A changed signature is a new function in a new
 * migration: instances of the previous release keep calling this one during a rolling deploy.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function vellum_save_version_1(
      p_owner uuid, p_note uuid, p_version_id uuid, p_title bytea, p_content bytea, p_now timestamptz,
      p_expected int[], p_version_max int, p_restored_from int, p_author uuid,
      p_tags text, p_tag_rows text[], p_links uuid[], p_tsv tsvector
    ) returns table (saved_version int, saved_at timestamptz)
    language plpgsql as $$
    declare
      v_version int;
      v_updated timestamptz;
      v_tags text;
    begin
      -- Locks the row: concurrent saves of the note queue here, and each reads the one before it.
      select n.version, n.updated_at, n.tags into v_version, v_updated, v_tags
      from notes n
      where n.id = p_note and n.owner_id = p_owner and n.deleted_at is null and n.version < p_version_max
        and (p_expected is null or n.version = any(p_expected))
      for update;
      if not found then
        return;
      end if;
      v_version := v_version + 1;
      -- A writer that waited for the lock may carry an older clock reading: time never goes back.
      v_updated := greatest(v_updated, p_now);
      update notes set version = v_version, version_id = p_version_id, title = p_title, updated_at = v_updated
      where id = p_note;
      insert into note_versions (id, note_id, version, title, content, created_at, restored_from, author_id)
      values (p_version_id, p_note, v_version, p_title, p_content, v_updated, p_restored_from, p_author);
      if cardinality(p_links) > 0 then
        insert into attachment_refs (version_id, attachment_id)
        select p_version_id, a.id from attachments a where a.owner_id = p_owner and a.id = any(p_links);
      end if;
      insert into search_history (version_id, note_id, owner_id, version, tsv)
      values (p_version_id, p_note, p_owner, v_version, p_tsv);
      -- Most saves leave the tags as they were: then nothing more is written.
      if v_tags is distinct from p_tags then
        update notes set tags = p_tags where id = p_note;
        delete from note_tags where note_id = p_note;
        insert into note_tags (note_id, owner_id, tag) select p_note, p_owner, unnest(p_tag_rows);
      end if;
      saved_version := v_version;
      saved_at := v_updated;
      return next;
    end
    $$`.execute(db);

  // False when the folder is not the owner's; a deleted account fails on the foreign key (23503).
  await sql`
    create function vellum_create_note_1(
      p_id uuid, p_owner uuid, p_version_id uuid, p_title bytea, p_content bytea, p_now timestamptz,
      p_folder uuid, p_tags text, p_tag_rows text[], p_links uuid[], p_tsv tsvector
    ) returns boolean
    language plpgsql as $$
    begin
      if p_folder is not null and not exists (select 1 from folders where id = p_folder and owner_id = p_owner) then
        return false;
      end if;
      insert into notes (id, owner_id, title, version, version_id, created_at, updated_at, folder_id, tags)
      values (p_id, p_owner, p_title, 1, p_version_id, p_now, p_now, p_folder, p_tags);
      insert into note_versions (id, note_id, version, title, content, created_at, restored_from, author_id)
      values (p_version_id, p_id, 1, p_title, p_content, p_now, null, p_owner);
      if cardinality(p_tag_rows) > 0 then
        insert into note_tags (note_id, owner_id, tag) select p_id, p_owner, unnest(p_tag_rows);
      end if;
      if cardinality(p_links) > 0 then
        insert into attachment_refs (version_id, attachment_id)
        select p_version_id, a.id from attachments a where a.owner_id = p_owner and a.id = any(p_links);
      end if;
      insert into search_history (version_id, note_id, owner_id, version, tsv)
      values (p_version_id, p_id, p_owner, 1, p_tsv);
      return true;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop function vellum_create_note_1`.execute(db);
  await sql`drop function vellum_save_version_1`.execute(db);
}
