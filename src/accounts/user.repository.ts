import type { Insertable, Selectable } from 'kysely';
import { compiled } from '../db/compiled.js';
import { selectForUpdate } from '../db/dialect.js';
import type { Db, Trx, UsersTable } from '../db/schema.js';

export type UserRow = Selectable<UsersTable>;

/** Named, not `*`: a prepared statement's result columns must not change under it (compiled.ts). */
const USER_COLUMNS = [
  'id',
  'username',
  'password_hash',
  'is_admin',
  'session_generation',
  'created_at',
  'updated_at',
  'disabled',
  'last_login_at',
  'storage_quota_bytes',
  'email',
  'reenabled_at',
] as const;

const findUserByIdQuery = compiled((db, p: { id: string }) =>
  db.selectFrom('users').select(USER_COLUMNS).where('id', '=', p.id),
);

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return findUserByIdQuery.takeFirst(db, { id });
}

const findAccountStatusQuery = compiled((db, p: { id: string }) =>
  db.selectFrom('users').select(['disabled', 'reenabled_at']).where('id', '=', p.id),
);

/** What the access layer needs to know of an account on every request (accounts/account-status.ts). */
export function findAccountStatus(
  db: Db,
  id: string,
): Promise<{ disabled: boolean; reenabled_at: string | null } | undefined> {
  return findAccountStatusQuery.takeFirst(db, { id });
}

const findUserByUsernameQuery = compiled((db, p: { username: string }) =>
  db.selectFrom('users').select(USER_COLUMNS).where('username', '=', p.username),
);

export function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return findUserByUsernameQuery.takeFirst(db, { username });
}

/**
 * Takes the user row's write lock until the caller's transaction ends (SQLite: the database's) and
 * returns the session generation; undefined when the user is gone or, with `generation`, when their
 * sessions were ended since it was read. Everything that issues or ends sessions takes this lock
 * first, so they serialise per user and always lock the user before any of their tokens.
 */
const lockSessionsQuery = compiled((db, p: { id: string }) =>
  db
    .updateTable('users')
    .set((eb) => ({ session_generation: eb.ref('session_generation') }))
    .where('id', '=', p.id)
    .returning('session_generation'),
);
const lockSessionsAtQuery = compiled((db, p: { id: string; generation: number }) =>
  db
    .updateTable('users')
    .set((eb) => ({ session_generation: eb.ref('session_generation') }))
    .where('id', '=', p.id)
    .where('session_generation', '=', p.generation)
    .returning('session_generation'),
);

export async function lockSessions(db: Db, id: string, generation?: number): Promise<number | undefined> {
  const row =
    generation === undefined
      ? await lockSessionsQuery.takeFirst(db, { id })
      : await lockSessionsAtQuery.takeFirst(db, { id, generation });
  return row?.session_generation;
}

/** Ends every session of the user for good: a login that read the old generation can no longer store a token. */
export async function endSessions(db: Db, id: string): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ session_generation: eb('session_generation', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Addresses are stored lower-cased (accounts/email.ts). */
export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').select(USER_COLUMNS).where('email', '=', email).executeTakeFirst();
}

export async function setEmail(db: Db, id: string, email: string | null, now: string): Promise<void> {
  await db.updateTable('users').set({ email, updated_at: now }).where('id', '=', id).execute();
}

/** The provider's admin group (single sign-on) made or unmade an administrator. */
export async function setAdmin(db: Db, id: string, isAdmin: boolean, now: string): Promise<void> {
  await db.updateTable('users').set({ is_admin: isAdmin, updated_at: now }).where('id', '=', id).execute();
}

export async function insertUser(db: Db, row: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function updatePasswordHash(db: Db, id: string, passwordHash: string, now: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
}

/**
 * Locks what deciding a deletion needs until the caller's transaction ends: the user's row and every
 * administrator's. PostgreSQL: one statement, rows in id order, so two deletions (two administrators
 * deleting each other) queue instead of each holding a row the other waits for. SQLite: a write
 * first, so the transaction takes the database's write lock now instead of upgrading a read lock.
 * Returns whether the user exists, whether they are an administrator, and how many there are.
 */
export async function lockForDeletion(
  trx: Trx,
  id: string,
): Promise<{ exists: boolean; isAdmin: boolean; admins: number }> {
  const rows = await selectForUpdate(
    trx,
    trx
      .selectFrom('users')
      .select(['id', 'is_admin'])
      .where((eb) => eb.or([eb('id', '=', id), eb('is_admin', '=', true)]))
      .orderBy('id'),
    () =>
      trx
        .updateTable('users')
        .set((eb) => ({ is_admin: eb.ref('is_admin') }))
        .where('id', '=', id)
        .execute(),
  );
  const target = rows.find((row) => row.id === id);
  return {
    exists: target !== undefined,
    isAdmin: target?.is_admin === true,
    admins: rows.filter((row) => row.is_admin).length,
  };
}

/** Notes, versions and refresh tokens go with the row (ON DELETE CASCADE). */
export async function deleteUser(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('users').where('id', '=', id).execute();
}

/** Ordered by creation time, then id, so pages stay stable. */
export function listUsers(db: Db, limit: number, offset: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').limit(limit).offset(offset).execute();
}

export async function anotherAdminExists(db: Db, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('is_admin', '=', true)
    .where('id', '!=', id)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function adminExists(db: Db): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('is_admin', '=', true).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** A successful login's time, in the transaction that opens its session. */
export async function recordLogin(db: Db, id: string, now: string): Promise<void> {
  await db.updateTable('users').set({ last_login_at: now }).where('id', '=', id).execute();
}

/** What an administrator changes (PATCH /auth/admin/{id}); only the fields given. */
export async function updateAdministration(
  db: Db,
  id: string,
  patch: { is_admin?: boolean; disabled?: boolean; reenabled_at?: string; storage_quota_bytes?: number | null },
  now: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ ...patch, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** The account's own attachment quota, or undefined for STORAGE_QUOTA_BYTES (null column) or no such user. */
export async function findStorageQuota(db: Db, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('storage_quota_bytes').where('id', '=', id).executeTakeFirst();
  return row?.storage_quota_bytes ?? undefined;
}

/**
 * Locks the user's row and every administrator's until the caller's transaction ends (as
 * lockForDeletion does, in id order), for deciding a demotion or a disabling: returns the target
 * (undefined when gone) and how many enabled administrators there are.
 */
export async function lockForAdministration(
  trx: Trx,
  id: string,
): Promise<{ target: { is_admin: boolean; disabled: boolean } | undefined; enabledAdmins: number }> {
  const rows = await selectForUpdate(
    trx,
    trx
      .selectFrom('users')
      .select(['id', 'is_admin', 'disabled'])
      .where((eb) => eb.or([eb('id', '=', id), eb('is_admin', '=', true)]))
      .orderBy('id'),
    () =>
      trx
        .updateTable('users')
        .set((eb) => ({ is_admin: eb.ref('is_admin') }))
        .where('id', '=', id)
        .execute(),
  );
  const target = rows.find((row) => row.id === id);
  return {
    target: target === undefined ? undefined : { is_admin: target.is_admin, disabled: target.disabled },
    enabledAdmins: rows.filter((row) => row.is_admin && !row.disabled).length,
  };
}
