import type { Insertable, Selectable } from 'kysely';
import type { AccessTokensTable, Db } from '../db/schema.js';

export type AccessTokenRow = Selectable<AccessTokensTable>;
const COLUMNS = ['id', 'user_id', 'name', 'token_hash', 'scopes', 'created_at', 'expires_at', 'last_used_at'] as const;

export async function insertToken(db: Db, row: Insertable<AccessTokensTable>): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute();
}

export function listTokens(db: Db, userId: string): Promise<AccessTokenRow[]> {
  return db
    .selectFrom('access_tokens')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** The token, unless its account is disabled (an administrator's PATCH /auth/admin/{id}): then none works. */
export function findTokenByHash(db: Db, hash: string): Promise<AccessTokenRow | undefined> {
  return db
    .selectFrom('access_tokens')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .select(COLUMNS.map((column) => `access_tokens.${column}` as const))
    .where('access_tokens.token_hash', '=', hash)
    .where('users.disabled', '=', false)
    .executeTakeFirst();
}

export async function deleteToken(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('access_tokens')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Records a use, at most once per `since`: the condition keeps a busy script from writing on every request. */
export async function touchToken(db: Db, id: string, now: string, since: string): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}

/** The tokens of these ids that exist, are unexpired and whose account is not disabled (their id and user). */
export function findLiveTokens(db: Db, ids: string[], now: string): Promise<Array<{ id: string; user_id: string }>> {
  return db
    .selectFrom('access_tokens')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .select(['access_tokens.id', 'access_tokens.user_id'])
    .where('access_tokens.id', 'in', ids)
    .where('users.disabled', '=', false)
    .where((eb) => eb.or([eb('access_tokens.expires_at', 'is', null), eb('access_tokens.expires_at', '>', now)]))
    .execute();
}
