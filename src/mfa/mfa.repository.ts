import type { Insertable, Selectable } from 'kysely';
import type { ChallengePurpose, Db, PasskeysTable } from '../db/schema.js';

/** Storage of second factors. Columns are named, never `*` (see db/compiled.ts on prepared statements). */

export async function findTotp(db: Db, userId: string) {
  return db
    .selectFrom('totp_factors')
    .select(['user_id', 'secret', 'confirmed_at', 'last_step'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** A new, unconfirmed secret in place of an earlier unconfirmed one; false when one is confirmed already. */
export async function startTotp(db: Db, userId: string, secret: string, now: string): Promise<boolean> {
  await db.deleteFrom('totp_factors').where('user_id', '=', userId).where('confirmed_at', 'is', null).execute();
  const result = await db
    .insertInto('totp_factors')
    .values({ user_id: userId, secret, confirmed_at: null, last_step: null, created_at: now })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Records `step` as used, if no later or equal step was: one conditional update, so two requests
 * with the same code cannot both pass. `confirmed` false matches only an unconfirmed factor and
 * confirms it.
 */
export async function acceptStep(
  db: Db,
  userId: string,
  step: number,
  confirmed: boolean,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('totp_factors')
    .set(confirmed ? { last_step: step } : { last_step: step, confirmed_at: now })
    .where('user_id', '=', userId)
    .where('confirmed_at', confirmed ? 'is not' : 'is', null)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteTotp(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('totp_factors').where('user_id', '=', userId).execute();
}

export async function replaceRecoveryCodes(
  db: Db,
  rows: { id: string; user_id: string; code_hash: string; created_at: string }[],
  userId: string,
): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (rows.length > 0)
    await db
      .insertInto('recovery_codes')
      .values(rows.map((row) => ({ ...row, used_at: null })))
      .execute();
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** Spends the code if it is the user's and unused: one conditional update, so it works exactly once. */
export async function useRecoveryCode(db: Db, userId: string, codeHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export type PasskeyRow = Selectable<PasskeysTable>;
const PASSKEY_COLUMNS = [
  'id',
  'user_id',
  'credential_id',
  'public_key',
  'counter',
  'transports',
  'backed_up',
  'name',
  'created_at',
  'last_used_at',
] as const;

export function listPasskeys(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db
    .selectFrom('passkeys')
    .select(PASSKEY_COLUMNS)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** For administrators' lists: of these users, who has a confirmed authenticator app and how many passkeys. */
export async function factorsOf(db: Db, userIds: string[]): Promise<Map<string, { totp: boolean; passkeys: number }>> {
  const found = new Map(userIds.map((id) => [id, { totp: false, passkeys: 0 }]));
  if (userIds.length === 0) return found;
  const [totp, passkeys] = await Promise.all([
    db
      .selectFrom('totp_factors')
      .select('user_id')
      .where('user_id', 'in', userIds)
      .where('confirmed_at', 'is not', null)
      .execute(),
    db
      .selectFrom('passkeys')
      .select((eb) => ['user_id', eb.fn.countAll<number>().as('n')])
      .where('user_id', 'in', userIds)
      .groupBy('user_id')
      .execute(),
  ]);
  for (const row of totp) found.get(row.user_id)!.totp = true;
  for (const row of passkeys) found.get(row.user_id)!.passkeys = Number(row.n);
  return found;
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findPasskeyByCredential(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').select(PASSKEY_COLUMNS).where('credential_id', '=', credentialId).executeTakeFirst();
}

export async function insertPasskey(db: Db, row: Insertable<PasskeysTable>): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

/** The new counter, if the stored one is still what the check read (two uses of one credential race otherwise). */
export async function recordPasskeyUse(
  db: Db,
  id: string,
  oldCounter: number,
  newCounter: number,
  backedUp: boolean,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: newCounter, backed_up: backedUp, last_used_at: now })
    .where('id', '=', id)
    .where('counter', '=', oldCounter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deletePasskey(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function deletePasskeys(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function storeChallenge(
  db: Db,
  row: { challenge: string; user_id: string | null; purpose: ChallengePurpose; expires_at: string },
): Promise<void> {
  await db.insertInto('webauthn_challenges').values(row).execute();
}

/**
 * Takes the challenge out if it is live and was issued for one of these purposes and this user: a
 * challenge works once.
 */
export async function consumeChallenge(
  db: Db,
  challenge: string,
  purpose: ChallengePurpose | readonly ChallengePurpose[],
  userId: string | null,
  now: string,
): Promise<boolean> {
  const purposes = typeof purpose === 'string' ? [purpose] : [...purpose];
  let query = db
    .deleteFrom('webauthn_challenges')
    .where('challenge', '=', challenge)
    .where('purpose', 'in', purposes)
    .where('expires_at', '>', now);
  query = userId === null ? query.where('user_id', 'is', null) : query.where('user_id', '=', userId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Whether a live challenge was issued for this purpose and user, without taking it out. */
export async function hasChallenge(
  db: Db,
  challenge: string,
  purpose: ChallengePurpose,
  userId: string,
  now: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('webauthn_challenges')
    .select('challenge')
    .where('challenge', '=', challenge)
    .where('purpose', '=', purpose)
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteExpiredChallenges(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
