import type { Insertable, Selectable } from 'kysely';
import type { Db, OidcIdentitiesTable } from '../db/schema.js';

export type IdentityRow = Selectable<OidcIdentitiesTable>;

/** The account an issuer + subject signs in to: the only way single sign-on finds one. */
export function findIdentity(db: Db, issuer: string, subject: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('oidc_identities')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

export async function insertIdentity(db: Db, row: Insertable<OidcIdentitiesTable>): Promise<void> {
  await db.insertInto('oidc_identities').values(row).execute();
}

export async function touchIdentity(db: Db, id: string, now: string): Promise<void> {
  await db.updateTable('oidc_identities').set({ last_login_at: now }).where('id', '=', id).execute();
}
