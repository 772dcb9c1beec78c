// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * What a note's tags were last made for, so the tags back-fill finds what a replica of an older
 * release left behind (issue #43) by an index, not by a scan. `tags_version_id`: the version whose
 * text `notes.tags` was derived from. `tags_listed`: whether `note_tags` holds the note's rows
 * (they are kept only outside the trash). Every write of this build keeps both true to what it
 * wrote; a release that knows nothing of them changes `version_id` or `deleted_at` alone, and the
 * note then matches `notes_tags_unsettled` (a partial index, empty while nothing is amiss once
 * the back-fill has looked at every note after this migration).
 *
 * PostgreSQL's save and create functions (2026-11-25-34-a) do not set them, so this build calls
 * new ones (…_2) that do; the previous release keeps calling the old ones during a rolling
 * upgrade, and what they write is checked by the back-fill like any older replica's write.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { pg, uuid, boolean, true: yes, false: no } = dialectTypes(db);
  await db.schema.alterTable('notes').addColumn('tags_version_id', uuid).execute();
  await db.schema
    .alterTable('notes')
    .addColumn('tags_listed', boolean, (c) => c.notNull().defaultTo(yes))
    .execute();
  // Every note starts with no version recorded, so the back-fill looks at each once, in the
  // background after the server listens, and records it (rewriting its tags only where they are
  // wrong). Recording them here, as the version the tags sit beside, rewrote every row of notes in
  // this transaction (17 s for 200,000 notes on PostgreSQL, the old replicas' writes waiting on
  // their row locks meanwhile), and trusted tags an older replica may already have left stale.
  // A trashed note has no rows; one whose rows an older replica's trash left stays listed, so the
  // back-fill takes them out. A live note with tags but no rows (restored by an older replica) is
  // not listed, so the back-fill puts them back.
  await sql`update notes set tags_listed = ${no}
    where not exists (select 1 from note_tags t where t.note_id = notes.id)
      and (deleted_at is not null or (tags is not null and tags <> ''))`.execute(db);
  // Built after the update. It holds every note until the back-fill's first pass, then only those
  // an older release writes.
  await sql`create index notes_tags_unsettled on notes (id)
    where tags_version_id is distinct from version_id or tags_listed = (deleted_at is not null)`.execute(db);

  if (!pg) return;
  // vellum_save_version_1 with the two columns set: the tags are now those of the new version, and
  // a save that rewrites the rows has them listed. A save that keeps the tags keeps the rows as
  // they were, listed or not.
  await sql`
    create function vellum_save_version_2(
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
      update notes set version = v_version, version_id = p_version_id, title = p_title, updated_at = v_updated,
        tags_version_id = p_version_id
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
        update notes set tags = p_tags, tags_listed = true where id = p_note;
        delete from note_tags where note_id = p_note;
        insert into note_tags (note_id, owner_id, tag) select p_note, p_owner, unnest(p_tag_rows);
      end if;
      saved_version := v_version;
      saved_at := v_updated;
      return next;
    end
    $$`.execute(db);

  await sql`
    create function vellum_create_note_2(
      p_id uuid, p_owner uuid, p_version_id uuid, p_title bytea, p_content bytea, p_now timestamptz,
      p_folder uuid, p_tags text, p_tag_rows text[], p_links uuid[], p_tsv tsvector
    ) returns boolean
    language plpgsql as $$
    begin
      if p_folder is not null and not exists (select 1 from folders where id = p_folder and owner_id = p_owner) then
        return false;
      end if;
      insert into notes (id, owner_id, title, version, version_id, created_at, updated_at, folder_id, tags, tags_version_id)
      values (p_id, p_owner, p_title, 1, p_version_id, p_now, p_now, p_folder, p_tags, p_version_id);
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
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop function vellum_create_note_2`.execute(db);
    await sql`drop function vellum_save_version_2`.execute(db);
  }
  await sql`drop index notes_tags_unsettled`.execute(db);
  await db.schema.alterTable('notes').dropColumn('tags_listed').execute();
  await db.schema.alterTable('notes').dropColumn('tags_version_id').execute();
}
