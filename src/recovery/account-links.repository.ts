import type { Insertable, Selectable } from 'kysely';
import type { AccountLinksTable, Db } from '../db/schema.js';

export type AccountLinkRow = Selectable<AccountLinksTable>;
export type LinkPurpose = AccountLinksTable['purpose'];

export async function insertLink(db: Db, row: Insertable<AccountLinksTable>): Promise<void> {
  await db.insertInto('account_links').values(row).execute();
}

export function findLink(db: Db, purpose: LinkPurpose, tokenHash: string): Promise<AccountLinkRow | undefined> {
  return db
    .selectFrom('account_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
}

/**
 * Uses the link once: one conditional update, so of two requests racing with the same token exactly
 * one gets true. Expiry is checked in the same statement.
 */
export async function consumeLink(db: Db, id: string, now: string): Promise<boolean> {
  const rows = await db
    .updateTable('account_links')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .execute();
  return rows.length === 1;
}

/** Voids every unused link of this purpose of the user: a newer one, or a reset that happened, replaces them. */
export async function voidLinks(db: Db, userId: string, purpose: LinkPurpose, now: string): Promise<void> {
  await db
    .updateTable('account_links')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

/** Deletes every link that was used or has expired: none can be followed any more (the maintenance job). */
export async function deleteDeadLinks(db: Db, now: string): Promise<number> {
  const result = await db
    .deleteFrom('account_links')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('used_at', 'is not', null)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
