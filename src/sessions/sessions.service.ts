import { createHash } from 'node:crypto';
import type { SecurityNotice } from '../mail/security-notice.js';
import type { FastifyBaseLogger } from 'fastify';
import { toUser } from '../accounts/user.js';
import * as users from '../accounts/user.repository.js';
import { audit } from '../audit/audit.service.js';
import type { Db, Trx } from '../db/schema.js';
import { isForeignKeyViolation, nowIso } from '../db/values.js';
import { Errors, StepFailure } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { isUuid, newId } from '../shared/ids.js';
import * as refreshTokens from './refresh-token.repository.js';
import { requireUserId, type TokenService } from './tokens.js';

/** What the session functions need; app.ts builds one object for these and the account functions. */
export interface SessionServices {
  db: Db;
  /** Mails the owner about a new second factor or password, after the commit (mail/security-notice.ts). Absent in the CLI. */
  securityNotice?: SecurityNotice;
  tokens: TokenService;
  log: FastifyBaseLogger;
  /** A rotated refresh token replayed within this many seconds is refused without ending the session. */
  reuseGraceSeconds: number;
  /**
   * Called at named steps of issuing tokens ('login:verified', 'refresh:locked'); tests pause
   * there to run a logout or a password change in between. Absent in production.
   */
  checkpoint?: (step: string) => Promise<void>;
  /**
   * Called after the commit of anything that ends sessions of the user or deletes one of their
   * personal tokens, so that live streams resting on them end now (events/live.ts). Absent in the CLI.
   */
  credentialsRevoked?: (userId: string) => void;
}

/** Thrown inside a login's transaction when the user's sessions were ended after the password check. */
class SessionsEnded extends Error {}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** Unix seconds of the refresh token's expiry (the view cookie's value). */
  refreshExpiresAt: number;
  /** The refresh-token family, i.e. the session id of GET /auth/sessions. */
  sessionId: string;
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
    // Which session an access token belongs to, for "this device", without a claim of our own in it.
    access_jti: access.claims.jti,
  });
  return {
    accessToken: access.token,
    refreshToken: refresh.token,
    refreshExpiresAt: refresh.claims.exp,
    sessionId: familyId,
  };
}

/**
 * Issues the first token pair of a new session for a user whose credentials were just checked
 * (`how` says which, for the trail), unless their sessions were ended since the row was read.
 */
export async function openSession(s: SessionServices, row: users.UserRow, client: ClientInfo, how: string) {
  const user = toUser(row);
  const fail = async (detail: string) => {
    await audit(s, { kind: 'login', outcome: 'failure', userId: row.id, username: row.username, client, detail });
    return Errors.invalidCredentials();
  };
  // Every way in (password, passkey, single sign-on) comes through here: a disabled account gets
  // the answer of wrong credentials. Disabling moves the generation on, so a login that read the
  // row before it is void below.
  if (row.disabled) throw await fail('account disabled');
  let issued: IssuedTokens;
  try {
    issued = await s.db.transaction().execute(async (trx) => {
      // The credentials were checked against the row read before. A password change, logout,
      // disabling or deletion that finished since has moved the generation on (or removed the row): this login is void.
      if ((await users.lockSessions(trx, row.id, row.session_generation)) === undefined) throw new SessionsEnded();
      await users.recordLogin(trx, row.id, nowIso());
      return issueTokenPair(trx, s.tokens, { id: user.id, admin: user.is_admin }, client);
    });
  } catch (error) {
    if (error instanceof SessionsEnded) throw await fail('sessions ended while logging in');
    throw error;
  }
  await audit(s, {
    kind: 'login',
    outcome: 'success',
    userId: user.id,
    username: user.username,
    client,
    detail: how === 'password' ? `session ${issued.sessionId}` : `session ${issued.sessionId}; ${how}`,
  });
  return { issued, user };
}

/**
 * Ends every session of the user: the generation moves on (logins in flight are void) and every
 * token is revoked, under the user row's lock, which refreshes in flight hold until they commit.
 * Run it inside the caller's transaction, before anything else it changes for the user.
 */
export async function endAllSessions(trx: Trx, userId: string): Promise<void> {
  await users.endSessions(trx, userId);
  await refreshTokens.revokeAllForUser(trx, userId, nowIso());
}

export async function logout(s: SessionServices, userId: string, client: ClientInfo): Promise<void> {
  await s.db.transaction().execute((trx) => endAllSessions(trx, userId));
  s.credentialsRevoked?.(userId);
  await audit(s, { kind: 'logout', outcome: 'success', userId, client, detail: 'all sessions revoked' });
}

/**
 * Spec §4.1 rule 9, after the CSRF check: type, presence, stored and active, revoke, sub, issue.
 * Presenting a token that was already rotated revokes its whole family: one of the two holders is
 * not the rightful client, and we cannot tell which.
 */
export async function refresh(
  s: SessionServices,
  token: string | undefined,
  client: ClientInfo,
): Promise<IssuedTokens> {
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
      if (subject !== null && (await users.lockSessions(trx, subject)) === undefined)
        return { old: undefined, issued: undefined, gone: true };
      await s.checkpoint?.('refresh:locked');
      const old = await refreshTokens.revokeIfActive(trx, tokenHash, now).catch((error: unknown) => {
        throw new StepFailure('Failed to revoke token', error); // spec §4.1 rule 9.4 has its own 500
      });
      // Spec order: revoke, then the sub check (the 400 below); the revocation is kept.
      if (old === undefined || subject === null) return { old, issued: undefined, gone: false };
      return {
        old,
        issued: await issueTokenPair(trx, s.tokens, { id: subject, admin: claims.admin }, client, old),
        gone: false,
      };
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
  await audit(s, {
    kind: 'refresh',
    outcome: 'success',
    userId: subject,
    client,
    detail: `session ${issued.sessionId}`,
  });
  return issued;
}

/**
 * A token that was rotated (it has a successor) and is presented again: revoke the session. A
 * token revoked by logout, a password change or a session revoke is merely invalid.
 */
async function detectReuse(
  s: SessionServices,
  tokenHash: string,
  now: string,
  subject: string | null,
  client: ClientInfo,
) {
  const row = await refreshTokens.findByHash(s.db, tokenHash);
  if (row === undefined || !row.revoked || !(await refreshTokens.wasRotated(s.db, row))) {
    const detail = row === undefined ? 'unknown token' : row.revoked ? 'revoked token' : 'expired token';
    await audit(s, { kind: 'refresh', outcome: 'failure', userId: row?.user_id ?? subject, client, detail });
    return;
  }
  // Two tabs or a retry racing with one token: the loser comes within the grace and is only refused.
  const sinceRotation = Date.parse(now) - Date.parse(row.revoked_at ?? now);
  if (sinceRotation < s.reuseGraceSeconds * 1000) {
    await audit(s, {
      kind: 'refresh',
      outcome: 'failure',
      userId: row.user_id,
      client,
      detail: `rotated token replayed within the grace (session ${row.family_id})`,
    });
    return;
  }
  const revokedCount = await refreshTokens.revokeFamily(s.db, row.family_id, now);
  s.credentialsRevoked?.(row.user_id);
  s.log.warn(
    { userId: row.user_id, familyId: row.family_id, revokedCount },
    'refresh token reuse detected; session revoked',
  );
  await audit(s, {
    kind: 'refresh_reuse',
    outcome: 'failure',
    userId: row.user_id,
    client,
    detail: `a rotated token of session ${row.family_id} was presented again; ${revokedCount} active tokens revoked`,
  });
}

export interface Session {
  /** The family id: stable across rotations, unlike any token. */
  id: string;
  created_at: string;
  last_used_at: string;
  user_agent: string | null;
  ip_address: string | null;
  /** The session of the access token that asked. */
  current: boolean;
}

/** The caller's active sessions, one per login, newest first. */
/** The caller's sessions; `current` marks the one the caller's access token (jti `accessJti`) was issued with. */
export async function listSessions(s: SessionServices, userId: string, accessJti: string): Promise<Session[]> {
  const [rows, currentSessionId] = await Promise.all([
    refreshTokens.listActiveTokens(s.db, userId, nowIso()),
    refreshTokens.familyOfAccessToken(s.db, userId, accessJti),
  ]);
  const byFamily = new Map<string, Session>();
  for (const row of rows) {
    // Rows of a family are newest token first; should a race ever leave two active, the newer describes it.
    if (byFamily.has(row.family_id)) continue;
    byFamily.set(row.family_id, {
      id: row.family_id,
      created_at: row.started_at,
      last_used_at: row.created_at,
      user_agent: row.user_agent,
      ip_address: row.ip_address,
      current: row.family_id === currentSessionId,
    });
  }
  return [...byFamily.values()];
}

/**
 * "Sign out everywhere else": every session ends, as after a password change, and the caller gets
 * a new one. (Access tokens issued before tokens named their session cannot say which is "this one",
 * and a new session is as good as the old for the caller.)
 */
export async function restartSessions(s: SessionServices, userId: string, client: ClientInfo): Promise<IssuedTokens> {
  const issued = await s.db.transaction().execute(async (trx) => {
    const row = await users.findUserById(trx, userId);
    if (row === undefined) throw Errors.userNotFound();
    await endAllSessions(trx, userId);
    return issueTokenPair(trx, s.tokens, { id: row.id, admin: row.is_admin }, client);
  });
  s.credentialsRevoked?.(userId);
  await audit(s, {
    kind: 'logout',
    outcome: 'success',
    userId,
    client,
    detail: `every other session revoked; new session ${issued.sessionId}`,
  });
  return issued;
}

/** Signs the session out everywhere it is used; its access tokens are refused on /api/auth from now on, elsewhere when they expire. */
export async function revokeSession(
  s: SessionServices,
  userId: string,
  sessionId: string,
  client: ClientInfo,
): Promise<void> {
  // The user row's lock first, as refreshes take it: one in flight for this session commits its new
  // token before this revokes the session, or finds its token revoked.
  const revoked = await s.db.transaction().execute(async (trx) => {
    await users.lockSessions(trx, userId);
    return refreshTokens.revokeSessionTokens(trx, userId, sessionId, nowIso());
  });
  if (revoked > 0) s.credentialsRevoked?.(userId);
  await audit(s, {
    kind: 'session_revoke',
    outcome: revoked > 0 ? 'success' : 'failure',
    userId,
    client,
    detail: revoked > 0 ? `session ${sessionId}` : `session ${sessionId} not found`,
  });
  if (revoked === 0) throw Errors.sessionNotFound();
}

/**
 * "Log out" on one device: ends the session the caller's access token was issued with (every
 * refresh token of it), and no other. Nothing to prove beyond the token: a device may always sign
 * itself out (ending *other* sessions asks for the password). A token whose session cannot be found
 * (already ended, or issued before tokens named their session) ends nothing and is not an error.
 */
export async function endCurrentSession(
  s: SessionServices,
  userId: string,
  accessJti: string,
  client: ClientInfo,
): Promise<void> {
  const sessionId = await refreshTokens.familyOfAccessToken(s.db, userId, accessJti);
  if (sessionId === undefined) {
    await audit(s, { kind: 'logout', outcome: 'failure', userId, client, detail: 'this session: not found' });
    return;
  }
  const revoked = await s.db.transaction().execute(async (trx) => {
    await users.lockSessions(trx, userId);
    return refreshTokens.revokeSessionTokens(trx, userId, sessionId, nowIso());
  });
  if (revoked > 0) s.credentialsRevoked?.(userId);
  await audit(s, {
    kind: 'logout',
    outcome: 'success',
    userId,
    client,
    detail: revoked > 0 ? `this session ${sessionId} revoked` : `this session ${sessionId} had already ended`,
  });
}
