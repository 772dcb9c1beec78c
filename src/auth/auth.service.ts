import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, isUniqueViolation, nowIso } from '../db/values.js';
import { Errors, StepFailure } from '../errors.js';
import { isUuid, newId } from '../shared/ids.js';
import { attemptedUsername, audit } from './audit.service.js';
import type { PasswordHasher } from './password-hasher.js';
import { passwordLength, PASSWORD_MAX_LENGTH, validatePassword, type PasswordPolicy } from './password-policy.js';
import * as refreshTokens from './refresh-token.repository.js';
import type { Claims, TokenService } from './tokens.js';
import * as users from './user.repository.js';
import { isValidUsername, normalizeUsername, validUsername } from './username.js';

export interface AuthServices {
  db: Db;
  tokens: TokenService;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  log: FastifyBaseLogger;
  /** A rotated refresh token replayed within this many seconds is refused without ending the session. */
  reuseGraceSeconds: number;
  /**
   * Called at named steps of issuing tokens ('login:verified', 'refresh:locked'); tests pause
   * there to run a logout or a password change in between. Absent in production.
   */
  checkpoint?: (step: string) => Promise<void>;
}

/** Thrown inside a login's transaction when the user's sessions were ended after the password check. */
class SessionsEnded extends Error {}

/** Where a session was opened from; recorded with its refresh token. */
export interface ClientInfo {
  userAgent: string | undefined;
  ip: string | undefined;
}

export interface User {
  id: string;
  username: string;
  is_admin: boolean;
  created_at: string;
  updated_at: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** Unix seconds of the refresh token's expiry (the view cookie's value). */
  refreshExpiresAt: number;
  /** The refresh-token family, i.e. the session id of GET /auth/sessions. */
  sessionId: string;
}

export function toUser(row: users.UserRow): User {
  return {
    id: row.id,
    username: row.username,
    is_admin: row.is_admin,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const hashRefreshToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Signs an access/refresh pair and stores the refresh token's hash; the caller owns the transaction. */
export async function issueTokenPair(
  db: Db,
  tokens: TokenService,
  user: { id: string; admin: boolean },
  client: ClientInfo,
  rotatedFrom?: { id: string; family_id: string },
): Promise<IssuedTokens> {
  const subject = { userId: user.id, admin: user.admin };
  const access = tokens.sign('access', subject);
  const refreshId = newId();
  const refresh = tokens.sign('refresh', subject, refreshId);
  const familyId = rotatedFrom?.family_id ?? refreshId;
  await refreshTokens.insertRefreshToken(db, {
    id: refreshId,
    user_id: user.id,
    family_id: familyId,
    parent_id: rotatedFrom?.id ?? null,
    token_hash: hashRefreshToken(refresh.token),
    expires_at: new Date(refresh.claims.exp * 1000).toISOString(),
    // Milliseconds, not the whole-second iat: sessions begun in the same second still sort.
    created_at: nowIso(),
    user_agent: client.userAgent?.slice(0, 512) ?? null,
    ip_address: client.ip ?? null,
  });
  return { accessToken: access.token, refreshToken: refresh.token, refreshExpiresAt: refresh.claims.exp, sessionId: familyId };
}

export async function signup(
  s: AuthServices, username: string, password: string, client: ClientInfo,
): Promise<{ id: string; username: string }> {
  const normalized = validUsername(username);
  await validatePassword(s.policy, password);
  const id = newId();
  const now = nowIso();
  const passwordHash = await s.hasher.hash(password);
  try {
    await users.insertUser(s.db, {
      id, username: normalized, password_hash: passwordHash, is_admin: false, created_at: now, updated_at: now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      await audit(s, { kind: 'signup', outcome: 'failure', username: normalized, client, detail: 'username taken' });
      throw Errors.usernameTaken();
    }
    throw error;
  }
  await audit(s, { kind: 'signup', outcome: 'success', userId: id, username: normalized, client });
  return { id, username: normalized };
}

/** Unknown user and wrong password cost the same and answer the same. */
export async function login(s: AuthServices, username: string, password: string, client: ClientInfo) {
  // Every failure writes the same kind of event, so the trail adds no timing difference either.
  const fail = async (userId: string | null, detail: string) => {
    await audit(s, { kind: 'login', outcome: 'failure', userId, username: attemptedUsername(username), client, detail });
    return Errors.invalidCredentials();
  };
  if (passwordLength(password) > PASSWORD_MAX_LENGTH) throw await fail(null, 'password too long');
  // A name no account can have (signup's rule) is an unknown user without a look-up: PostgreSQL
  // refuses some such names outright (U+0000 in text), which must not become a 500.
  const normalized = normalizeUsername(username);
  const row = isValidUsername(normalized) ? await users.findUserByUsername(s.db, normalized) : undefined;
  if (row === undefined) {
    await s.hasher.verifyDummy(password);
    throw await fail(null, 'unknown user');
  }
  if (!(await s.hasher.verify(row.password_hash, password))) throw await fail(row.id, 'wrong password');
  await s.checkpoint?.('login:verified');
  const user = toUser(row);
  let issued: IssuedTokens;
  try {
    issued = await s.db.transaction().execute(async (trx) => {
      // The password was checked against the row read above. A password change, logout or deletion
      // that finished since has moved the generation on (or removed the row): this login is void.
      if ((await users.lockSessions(trx, row.id, row.session_generation)) === undefined) throw new SessionsEnded();
      return issueTokenPair(trx, s.tokens, { id: user.id, admin: user.is_admin }, client);
    });
  } catch (error) {
    if (error instanceof SessionsEnded) throw await fail(row.id, 'sessions ended while logging in');
    throw error;
  }
  await audit(s, { kind: 'login', outcome: 'success', userId: user.id, username: user.username, client, detail: `session ${issued.sessionId}` });
  return { issued, user };
}

export function requireUserId(claims: Claims): string {
  if (!isUuid(claims.sub)) throw Errors.invalidUserId();
  return claims.sub.toLowerCase();
}

export async function getUser(s: AuthServices, claims: Claims): Promise<User> {
  const row = await users.findUserById(s.db, requireUserId(claims));
  if (row === undefined) throw Errors.userNotFound();
  return toUser(row);
}

/** Spec §4.1 rule 3: old password first (401), then the new one's validation (400). */
export async function changePassword(
  s: AuthServices, claims: Claims, oldPassword: string, newPassword: string, client: ClientInfo,
) {
  const row = await confirmPassword(s, claims, oldPassword, { kind: 'password_change', client, detail: 'wrong old password' });
  const event = { kind: 'password_change', userId: row.id, username: row.username, client } as const;
  try {
    await validatePassword(s.policy, newPassword);
  } catch (error) {
    await audit(s, { ...event, outcome: 'failure', detail: 'new password rejected' });
    throw error;
  }
  const passwordHash = await s.hasher.hash(newPassword);
  const now = nowIso();
  const issued = await s.db.transaction().execute(async (trx) => {
    await users.endSessions(trx, row.id);
    await users.updatePasswordHash(trx, row.id, passwordHash, now);
    await refreshTokens.revokeAllForUser(trx, row.id, now);
    return issueTokenPair(trx, s.tokens, { id: row.id, admin: row.is_admin }, client);
  });
  await audit(s, { ...event, outcome: 'success', detail: `other sessions revoked; new session ${issued.sessionId}` });
  return { issued, user: toUser({ ...row, password_hash: passwordHash, updated_at: now }) };
}

export async function deleteOwnAccount(s: AuthServices, claims: Claims, password: string, client: ClientInfo): Promise<void> {
  const row = await confirmPassword(s, claims, password, { kind: 'account_delete', client, detail: 'wrong password' });
  await removeUser(s, row.id);
  await audit(s, { kind: 'account_delete', userId: row.id, username: row.username, client, outcome: 'success' });
}

/** Loads the caller (404 when gone) and checks their current password (401, audited). */
async function confirmPassword(
  s: AuthServices, claims: Claims, password: string,
  failure: { kind: 'password_change' | 'account_delete'; client: ClientInfo; detail: string },
): Promise<users.UserRow> {
  const row = await users.findUserById(s.db, requireUserId(claims));
  if (row === undefined) throw Errors.userNotFound();
  if (passwordLength(password) > PASSWORD_MAX_LENGTH || !(await s.hasher.verify(row.password_hash, password))) {
    await audit(s, { kind: failure.kind, userId: row.id, username: row.username, client: failure.client, outcome: 'failure', detail: failure.detail });
    throw Errors.invalidCredentials();
  }
  return row;
}

/**
 * Revokes every refresh token, then deletes the user and, by cascade, their notes and tokens.
 * The last administrator is refused with 409 before anything changes.
 */
export async function removeUser(s: AuthServices, userId: string): Promise<boolean> {
  const target = await users.findUserById(s.db, userId);
  if (target === undefined) return false;
  if (target.is_admin && !(await users.anotherAdminExists(s.db, userId))) throw Errors.lastAdministrator();
  try {
    await endAllSessions(s.db, userId);
  } catch (error) {
    // Spec §3.1: a failure of this step is only logged; the deletion below removes the rows anyway.
    s.log.error({ err: error, userId }, 'revoking refresh tokens before deletion failed');
  }
  const outcome = await users.deleteUserKeepingAnAdmin(s.db, userId);
  if (outcome === 'last-admin') throw Errors.lastAdministrator();
  return outcome === 'deleted';
}

/** The event names the administrator who acted; the deleted user is in its detail. */
export async function adminDeleteUser(s: AuthServices, claims: Claims, id: string, client: ClientInfo): Promise<void> {
  const deleted = await removeUser(s, id);
  await audit(s, {
    kind: 'admin_delete_user', outcome: deleted ? 'success' : 'failure', userId: adminId(claims), client,
    detail: deleted ? `user ${id}` : `user ${id} not found`,
  });
  if (!deleted) throw Errors.userNotFound();
}

/** The admin routes check only the admin claim; a malformed sub still gets its actor recorded as unknown. */
const adminId = (claims: Claims): string | null => (isUuid(claims.sub) ? claims.sub.toLowerCase() : null);

/** An empty page is null, as the spec shows. */
export async function listUsers(
  s: AuthServices, claims: Claims, limit: number, offset: number, client: ClientInfo,
): Promise<User[] | null> {
  const rows = await users.listUsers(s.db, limit, offset);
  await audit(s, { kind: 'admin_list_users', outcome: 'success', userId: adminId(claims), client, detail: `limit ${limit} offset ${offset}` });
  return rows.length === 0 ? null : rows.map(toUser);
}

/**
 * Ends every session of the user: the generation moves on (logins in flight are void) and every
 * token is revoked, under the user row's lock, which refreshes in flight hold until they commit.
 */
export async function endAllSessions(db: Db, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await users.endSessions(trx, userId);
    await refreshTokens.revokeAllForUser(trx, userId, nowIso());
  });
}

export async function logout(s: AuthServices, claims: Claims, client: ClientInfo): Promise<void> {
  const userId = requireUserId(claims);
  await endAllSessions(s.db, userId);
  await audit(s, { kind: 'logout', outcome: 'success', userId, client, detail: 'all sessions revoked' });
}

/**
 * Spec §4.1 rule 9, after the CSRF check: type, presence, stored and active, revoke, sub, issue.
 * Presenting a token that was already rotated revokes its whole family: one of the two holders is
 * not the rightful client, and we cannot tell which.
 */
export async function refresh(s: AuthServices, token: string | undefined, client: ClientInfo): Promise<IssuedTokens> {
  if (token === undefined || token === '') throw Errors.unauthorized();
  const claims = s.tokens.verify(token);
  if (claims === null) throw Errors.unauthorized();
  if (claims.type !== 'refresh') throw Errors.invalidToken();
  const tokenHash = hashRefreshToken(token);
  const now = nowIso();
  const subject = isUuid(claims.sub) ? claims.sub.toLowerCase() : null;
  let rotation;
  try {
    // Revoke and issue in one transaction: a concurrent refresh with the same token that loses the
    // race then finds the new token committed when it revokes the family, never in between.
    rotation = await s.db.transaction().execute(async (trx) => {
      // The user row first, as everything that ends sessions takes it first: a logout that comes
      // now waits for this rotation to commit and then revokes its new token too.
      if (subject !== null && (await users.lockSessions(trx, subject)) === undefined) return { old: undefined, issued: undefined, gone: true };
      await s.checkpoint?.('refresh:locked');
      const old = await refreshTokens.revokeIfActive(trx, tokenHash, now).catch((error: unknown) => {
        throw new StepFailure('Failed to revoke token', error); // spec §4.1 rule 9.4 has its own 500
      });
      // Spec order: revoke, then the sub check (the 400 below); the revocation is kept.
      if (old === undefined || subject === null) return { old, issued: undefined, gone: false };
      return { old, issued: await issueTokenPair(trx, s.tokens, { id: subject, admin: claims.admin }, client, old), gone: false };
    });
  } catch (error) {
    if (!isForeignKeyViolation(error)) throw error;
    await audit(s, { kind: 'refresh', outcome: 'failure', userId: subject, client, detail: 'user deleted' });
    throw Errors.invalidRefreshToken();
  }
  if (rotation.gone) {
    await audit(s, { kind: 'refresh', outcome: 'failure', userId: subject, client, detail: 'user deleted' });
    throw Errors.invalidRefreshToken();
  }
  if (rotation.old === undefined) {
    await detectReuse(s, tokenHash, now, subject, client).catch((error: unknown) => {
      // No step that spec §7 names failed (the token was not revoked here, none was generated):
      // a plain 500, not the route's "Failed to generate tokens" (503 when the database is down).
      throw new StepFailure('Internal Server Error', error);
    });
    throw Errors.invalidRefreshToken();
  }
  requireUserId(claims);
  const issued = rotation.issued!;
  await audit(s, { kind: 'refresh', outcome: 'success', userId: subject, client, detail: `session ${issued.sessionId}` });
  return issued;
}

/**
 * A token that was rotated (it has a successor) and is presented again: revoke the session. A
 * token revoked by logout, a password change or a session revoke is merely invalid.
 */
async function detectReuse(s: AuthServices, tokenHash: string, now: string, subject: string | null, client: ClientInfo) {
  const row = await refreshTokens.findByHash(s.db, tokenHash);
  if (row === undefined || !row.revoked || !(await refreshTokens.wasRotated(s.db, row))) {
    const detail = row === undefined ? 'unknown token' : row.revoked ? 'revoked token' : 'expired token';
    await audit(s, { kind: 'refresh', outcome: 'failure', userId: row?.user_id ?? subject, client, detail });
    return;
  }
  // Two tabs or a retry racing with one token: the loser comes within the grace and is only refused.
  const sinceRotation = Date.parse(now) - Date.parse(row.revoked_at ?? now);
  if (sinceRotation < s.reuseGraceSeconds * 1000) {
    await audit(s, { kind: 'refresh', outcome: 'failure', userId: row.user_id, client, detail: `rotated token replayed within the grace (session ${row.family_id})` });
    return;
  }
  const revokedCount = await refreshTokens.revokeFamily(s.db, row.family_id, now);
  s.log.warn({ userId: row.user_id, familyId: row.family_id, revokedCount }, 'refresh token reuse detected; session revoked');
  await audit(s, {
    kind: 'refresh_reuse', outcome: 'failure', userId: row.user_id, client,
    detail: `a rotated token of session ${row.family_id} was presented again; ${revokedCount} active tokens revoked`,
  });
}
