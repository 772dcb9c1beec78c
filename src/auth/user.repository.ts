import type { Insertable, Selectable } from 'kysely';
import { compiled } from '../db/compiled.js';
import type { Db, UsersTable } from '../db/schema.js';

export type UserRow = Selectable<UsersTable>;

/** Named, not `*`: a prepared statement's result columns must not change under it (compiled.ts). */
const USER_COLUMNS = ['id', 'username', 'password_hash', 'is_admin', 'created_at', 'updated_at'] as const;

const findUserByIdQuery = compiled((db, p: { id: string }) => db.selectFrom('users').select(USER_COLUMNS).where('id', '=', p.id));

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return findUserByIdQuery.takeFirst(db, { id });
}

const findUserByUsernameQuery = compiled((db, p: { username: string }) =>
  db.selectFrom('users').select(USER_COLUMNS).where('username', '=', p.username));

export function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return findUserByUsernameQuery.takeFirst(db, { username });
}

export async function insertUser(db: Db, row: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function updatePasswordHash(db: Db, id: string, passwordHash: string, now: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
}

/** True when a row was deleted; notes, versions and refresh tokens go with it (ON DELETE CASCADE). */
export async function deleteUser(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ordered by creation time, then id, so pages stay stable. */
export function listUsers(db: Db, limit: number, offset: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function adminExists(db: Db): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('is_admin', '=', true).limit(1).executeTakeFirst();
  return row !== undefined;
}
