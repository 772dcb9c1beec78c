import type { Insertable } from 'kysely';
import type { AccountSetupsTable, Db } from '../db/schema.js';

/** A new set-up link for the user; any earlier unused one of theirs stops working (one link at a time). */
export async function replaceSetupLink(db: Db, row: Insertable<AccountSetupsTable>): Promise<void> {
  await db.deleteFrom('account_setups').where('user_id', '=', row.user_id).where('used_at', 'is', null).execute();
  await db.insertInto('account_setups').values(row).execute();
}

/** The user a usable (unused, unexpired) link names. */
export async function findUsableSetup(
  db: Db,
  tokenHash: string,
  now: string,
): Promise<{ id: string; user_id: string } | undefined> {
  return db
    .selectFrom('account_setups')
    .select(['id', 'user_id'])
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Uses the link in the caller's transaction; false when another request used it first (single use). */
export async function useSetup(db: Db, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('account_setups')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
