import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, isUniqueViolation, nowIso, toBool, toIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { isUuid, newId } from '../shared/ids.js';
import type { PasswordHasher } from './password-hasher.js';
import { passwordLength, PASSWORD_MAX_LENGTH, validatePassword, type PasswordPolicy } from './password-policy.js';
import * as refreshTokens from './refresh-token.repository.js';
import type { Claims, TokenService } from './tokens.js';
import * as users from './user.repository.js';
import { normalizeUsername, validUsername } from './username.js';

export interface AuthServices {
  db: Db;
  tokens: TokenService;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  log: FastifyBaseLogger;
}

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
}

export function toUser(row: users.UserRow): User {
  return {
    id: row.id,
    username: row.username,
    is_admin: toBool(row.is_admin),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
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
  await refreshTokens.insertRefreshToken(db, {
    id: refreshId,
    user_id: user.id,
    family_id: rotatedFrom?.family_id ?? refreshId,
    parent_id: rotatedFrom?.id ?? null,
    token_hash: hashRefreshToken(refresh.token),
    expires_at: new Date(refresh.claims.exp * 1000).toISOString(),
    created_at: new Date(refresh.claims.iat * 1000).toISOString(),
    user_agent: client.userAgent?.slice(0, 512) ?? null,
    ip_address: client.ip ?? null,
  });
  return { accessToken: access.token, refreshToken: refresh.token, refreshExpiresAt: refresh.claims.exp };
}

export async function signup(s: AuthServices, username: string, password: string): Promise<{ id: string; username: string }> {
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
    if (isUniqueViolation(error)) throw Errors.usernameTaken();
    throw error;
  }
  return { id, username: normalized };
}

/** Unknown user and wrong password cost the same and answer the same. */
export async function login(s: AuthServices, username: string, password: string, client: ClientInfo) {
  if (passwordLength(password) > PASSWORD_MAX_LENGTH) throw Errors.invalidCredentials();
  const row = await users.findUserByUsername(s.db, normalizeUsername(username));
  if (row === undefined) {
    await s.hasher.verifyDummy(password);
    throw Errors.invalidCredentials();
  }
  if (!(await s.hasher.verify(row.password_hash, password))) throw Errors.invalidCredentials();
  const user = toUser(row);
  const issued = await issueTokenPair(s.db, s.tokens, { id: user.id, admin: user.is_admin }, client);
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
  const row = await users.findUserById(s.db, requireUserId(claims));
  if (row === undefined) throw Errors.userNotFound();
  if (passwordLength(oldPassword) > PASSWORD_MAX_LENGTH || !(await s.hasher.verify(row.password_hash, oldPassword))) {
    throw Errors.invalidCredentials();
  }
  await validatePassword(s.policy, newPassword);
  const passwordHash = await s.hasher.hash(newPassword);
  const now = nowIso();
  const issued = await s.db.transaction().execute(async (trx) => {
    await users.updatePasswordHash(trx, row.id, passwordHash, now);
    await refreshTokens.revokeAllForUser(trx, row.id, now);
    return issueTokenPair(trx, s.tokens, { id: row.id, admin: toBool(row.is_admin) }, client);
  });
  return { issued, user: toUser({ ...row, password_hash: passwordHash, updated_at: now }) };
}

export async function deleteOwnAccount(s: AuthServices, claims: Claims, password: string): Promise<void> {
  const row = await users.findUserById(s.db, requireUserId(claims));
  if (row === undefined) throw Errors.userNotFound();
  if (passwordLength(password) > PASSWORD_MAX_LENGTH || !(await s.hasher.verify(row.password_hash, password))) {
    throw Errors.invalidCredentials();
  }
  await removeUser(s, row.id);
}

/** Revokes every refresh token, then deletes the user and, by cascade, their notes and tokens. */
export async function removeUser(s: AuthServices, userId: string): Promise<boolean> {
  try {
    await refreshTokens.revokeAllForUser(s.db, userId, nowIso());
  } catch (error) {
    // Spec §3.1: a failure of this step is only logged; the deletion below removes the rows anyway.
    s.log.error({ err: error, userId }, 'revoking refresh tokens before deletion failed');
  }
  return users.deleteUser(s.db, userId);
}

export async function adminDeleteUser(s: AuthServices, id: string): Promise<void> {
  if (!(await removeUser(s, id))) throw Errors.userNotFound();
}

/** An empty page is null, as the spec shows. */
export async function listUsers(s: AuthServices, limit: number, offset: number): Promise<User[] | null> {
  const rows = await users.listUsers(s.db, limit, offset);
  return rows.length === 0 ? null : rows.map(toUser);
}

export async function logout(s: AuthServices, claims: Claims): Promise<void> {
  await refreshTokens.revokeAllForUser(s.db, requireUserId(claims), nowIso());
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
  const revoked = await refreshTokens.revokeIfActive(s.db, tokenHash, now);
  if (revoked === undefined) {
    await detectReuse(s, tokenHash, now);
    throw Errors.invalidRefreshToken();
  }
  const userId = requireUserId(claims);
  try {
    return await issueTokenPair(s.db, s.tokens, { id: userId, admin: claims.admin }, client, revoked);
  } catch (error) {
    if (isForeignKeyViolation(error)) throw Errors.invalidRefreshToken(); // the user was deleted meanwhile
    throw error;
  }
}

async function detectReuse(s: AuthServices, tokenHash: string, now: string): Promise<void> {
  const row = await refreshTokens.findByHash(s.db, tokenHash);
  if (row === undefined || !toBool(row.revoked)) return;
  const revokedCount = await refreshTokens.revokeFamily(s.db, row.family_id, now);
  s.log.warn({ userId: row.user_id, familyId: row.family_id, revokedCount }, 'refresh token reuse detected; session revoked');
}
