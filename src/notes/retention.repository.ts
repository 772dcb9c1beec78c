import { sql } from 'kysely';
import { reclaimDeletedRows } from '../db/dialect.js';
import type { Db } from '../db/schema.js';
import type { RetentionCandidate } from './retention.js';

/** Notes (after `after`, by id; from the first when undefined) that have a version other than the current one older than `oldest`. */
export function notesWithOldVersions(
  db: Db,
  after: string | undefined,
  oldest: string,
  limit: number,
): Promise<{ id: string; version: number }[]> {
  return db
    .selectFrom('notes as n')
    .select(['n.id', 'n.version'])
    .$if(after !== undefined, (qb) => qb.where('n.id', '>', after!))
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('note_versions as v')
          .select(sql`1`.as('one'))
          .whereRef('v.note_id', '=', 'n.id')
          .whereRef('v.version', '<>', 'n.version')
          .where('v.created_at', '<', oldest),
      ),
    )
    .orderBy('n.id')
    .limit(limit)
    .execute();
}

/** The note's versions created before `before`: the candidates and the ones that judge them. */
export function versionsBefore(db: Db, noteId: string, before: string): Promise<RetentionCandidate[]> {
  return db
    .selectFrom('note_versions')
    .select(['id', 'version', 'created_at', 'label'])
    .where('note_id', '=', noteId)
    .where('created_at', '<', before)
    .execute();
}

/** Statement parameters stay far below SQLite's and PostgreSQL's limits. */
const DELETE_CHUNK = 500;

/**
 * Deletes those of `ids` that are still unlabelled, not the note's current version and not pinned by
 * a share link, and counts
 * them into `notes.pruned`; returns the numbers this call deleted (rows another transaction deleted
 * first are not counted twice).
 */
export async function deleteVersions(trx: Db, noteId: string, ids: string[]): Promise<number[]> {
  const deleted: number[] = [];
  for (let i = 0; i < ids.length; i += DELETE_CHUNK) {
    const rows = await trx
      .deleteFrom('note_versions')
      .where('note_id', '=', noteId)
      .where('id', 'in', ids.slice(i, i + DELETE_CHUNK))
      .where('label', 'is', null)
      .where('version', '<', (eb) => eb.selectFrom('notes').select('version').where('id', '=', noteId))
      // A version a share link pins stays, whatever the policy says (it is what the link shows).
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('shares')
              .select('shares.id')
              .where('shares.note_id', '=', noteId)
              .whereRef('shares.version', '=', 'note_versions.version'),
          ),
        ),
      )
      .returning('version')
      .execute();
    for (const row of rows) deleted.push(row.version);
  }
  if (deleted.length > 0) {
    await trx
      .updateTable('notes')
      .set((eb) => ({ pruned: eb('pruned', '+', deleted.length) }))
      .where('id', '=', noteId)
      .execute();
  }
  return deleted;
}

/**
 * On PostgreSQL, a history page deep in a pruned note counts its way down the (note_id, version)
 * index; until the deleted entries are vacuumed, each one it passes costs a heap visit (the pages
 * are not all-visible), and the deepest page of a 10,000-version note pruned to 3,000 took 2.7x the
 * first (BENCHMARKS.md). Vacuuming right after a prune that deleted something, rather than whenever
 * autovacuum's threshold is crossed, keeps those pages index-only. SQLite frees the entries at once.
 */
export async function reclaimPrunedVersions(db: Db): Promise<void> {
  await reclaimDeletedRows(db, 'note_versions');
}
