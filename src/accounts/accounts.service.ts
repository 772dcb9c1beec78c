import type { FastifyBaseLogger } from 'fastify';
import type { SecurityNotice } from '../mail/security-notice.js';
import { audit, type AuditEvent } from '../audit/audit.service.js';
import type { Db, Trx } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import {
  passwordLength,
  PASSWORD_MAX_LENGTH,
  validatePassword,
  type PasswordPolicy,
} from '../passwords/password-policy.js';
import { requireUserId, type Claims } from '../shared/claims.js';
import { newId } from '../shared/ids.js';
import { toUser, type User } from './user.js';
import * as users from './user.repository.js';
import { attemptedUsername, isValidUsername, normalizeUsername, validUsername } from './username.js';
import * as invitations from '../invitations/invitations.service.js';
import type { SignupMode } from '../config.js';

/** The first token pair of a session (sessions/sessions.service.ts, IssuedTokens). */
export interface NewSession {
  accessToken: string;
  refreshToken: string;
  /** Unix seconds of the refresh token's expiry. */
  refreshExpiresAt: number;
  sessionId: string;
}

/**
 * What accounts ask of sessions, which sit above them (sessions lock and read users): given by
 * app.ts and the CLI, so this folder imports neither sessions/ nor anything that does.
 */
export interface AccountSessions {
  /** Ends every session of the user, inside the caller's transaction, before anything else it changes for them. */
  endAll(trx: Trx, userId: string): Promise<void>;
  /** A new session for the user, inside the caller's transaction. */
  open(trx: Trx, user: { id: string; admin: boolean }, client: ClientInfo): Promise<NewSession>;
  /** Runs `check` as one attempt of the caller's session (sessions/session-lockout.ts, checkInSession). */
  checkIn(caller: Claims, check: () => Promise<boolean>): Promise<boolean>;
}

/**
 * What the account functions need. HTTP, the start-up bootstrap and the `vellum` CLI all come
 * through here, so each path validates alike and writes its audit event.
 */
export interface AccountServices {
  db: Db;
  /** Mails the owner about a new second factor or password, after the commit (mail/security-notice.ts). Absent in the CLI. */
  securityNotice?: SecurityNotice;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  log: FastifyBaseLogger;
  /** Tests only: called at named steps ('delete:locked') to run a competing request there. */
  checkpoint?: (step: string) => Promise<void>;
  /**
   * Called after the commit of anything that ends sessions of the user or deletes one of their
   * personal tokens, so that live streams resting on them end now (events/live.ts), and of an
   * administrator disabling or enabling the account, so that every instance forgets what it cached
   * of it (accounts/account-status.ts). Absent in the CLI.
   */
  credentialsRevoked?: (userId: string) => void;
  sessions: AccountSessions;
  /**
   * Run after a sign-up created the account (given by app.ts: the notes' welcome note, when
   * WELCOME_NOTE is on). Its failure does not undo the account: it is logged.
   */
  welcome?: (userId: string) => Promise<void>;
}

/** What the functions that touch no session need (the bootstrap has none). */
export type AccountStore = Omit<AccountServices, 'sessions'>;

/**
 * A new account after signup's checks: the username (400), then the password (400), then the name
 * must be free (409). `event` says who created it, for the audit trail. With `invitation`, the
 * account and the invitation's use are one transaction: an invitation used meanwhile leaves no account.
 */
async function createAccount(
  s: AccountStore,
  username: string,
  password: string,
  isAdmin: boolean,
  event: Pick<AuditEvent, 'kind' | 'client' | 'detail'>,
  invitation?: { id: string; refused: () => Error },
): Promise<{ id: string; username: string }> {
  const normalized = validUsername(username);
  await validatePassword(s.policy, password);
  const id = newId();
  const now = nowIso();
  const passwordHash = await s.hasher.hash(password);
  try {
    await s.db.transaction().execute(async (trx) => {
      await users.insertUser(trx, {
        id,
        username: normalized,
        password_hash: passwordHash,
        is_admin: isAdmin,
        created_at: now,
        updated_at: now,
      });
      if (invitation !== undefined && !(await invitations.redeem(trx, invitation.id, id))) throw new InvitationUsed();
    });
  } catch (error) {
    if (error instanceof InvitationUsed) {
      await audit(s, { ...event, outcome: 'failure', username: normalized, detail: 'invitation used meanwhile' });
      throw invitation!.refused();
    }
    if (isUniqueViolation(error)) {
      await audit(s, { ...event, outcome: 'failure', username: normalized, detail: 'username taken' });
      throw Errors.usernameTaken();
    }
    throw error;
  }
  await audit(s, { ...event, outcome: 'success', userId: id, username: normalized });
  return { id, username: normalized };
}

/** Thrown inside sign-up's transaction when its invitation was used by another sign-up first. */
class InvitationUsed extends Error {}

/**
 * Sign-up under SIGNUP (docs/api.md, "Sign-up modes"): checked first, before any other rule, so a
 * closed server never says what a password lacks. A valid invitation works in every mode and makes
 * an administrator when it says so; an invitation that is not (unknown, used, revoked, expired)
 * is refused like none at all (403 invitation_required, or signup_closed when closed).
 */
export async function signup(
  s: AccountServices,
  username: string,
  password: string,
  client: ClientInfo,
  options: {
    mode: SignupMode;
    invitation?: string | undefined;
    welcome?: boolean;
    /** PASSWORD_LOGIN (absent: on): off refuses sign-ups with a password, but an administrator's invitation's. */
    passwordLogin?: boolean;
  } = { mode: 'open' },
) {
  const created = await signupAccount(s, username, password, client, options);
  // A welcome note only when asked for (the web client's sign-up): an account made through the API starts empty.
  if (options.welcome === true && s.welcome !== undefined) {
    try {
      await s.welcome(created.id);
    } catch (error) {
      s.log.warn({ err: error, userId: created.id }, 'the welcome note could not be created');
    }
  }
  return created;
}

async function signupAccount(
  s: AccountServices,
  username: string,
  password: string,
  client: ClientInfo,
  options: { mode: SignupMode; invitation?: string | undefined; passwordLogin?: boolean },
) {
  const refused = options.mode === 'closed' ? Errors.signupClosed : Errors.invitationRequired;
  const event = { kind: 'signup', client } as const;
  const tried = attemptedUsername(username);
  // PASSWORD_LOGIN=off: an account made with a password could never sign in with it (only
  // administrators keep theirs), so only an administrator's invitation signs up so.
  const passwordRefused = async () => {
    await audit(s, { ...event, outcome: 'failure', username: tried, detail: 'PASSWORD_LOGIN=off' });
    return Errors.passwordSignupDisabled();
  };
  if (options.invitation === undefined) {
    if (options.mode === 'open') {
      if (options.passwordLogin === false) throw await passwordRefused();
      return createAccount(s, username, password, false, event);
    }
    await audit(s, { ...event, outcome: 'failure', username: tried, detail: `SIGNUP=${options.mode}` });
    throw refused();
  }
  const found = await invitations.findUsable(s.db, options.invitation);
  if (found === undefined) {
    await audit(s, { ...event, outcome: 'failure', username: tried, detail: 'invalid invitation' });
    throw refused();
  }
  if (options.passwordLogin === false && !found.admin) throw await passwordRefused();
  await s.checkpoint?.('signup:invitation-checked');
  return createAccount(
    s,
    username,
    password,
    found.admin,
    { ...event, detail: `invitation ${found.id}${found.admin ? ' (administrator)' : ''}` },
    { id: found.id, refused },
  );
}

/** An administrator, created by the start-up bootstrap or `vellum create-admin` (`by` says which). */
export function createAdmin(s: AccountStore, username: string, password: string, by: string) {
  return createAccount(s, username, password, true, { kind: 'admin_create', detail: `by ${by}` });
}

/**
 * `vellum reset-password`: a new password without the old one. Ends every session, as a password
 * change does; undefined when there is no such user.
 */
export async function resetPassword(
  s: AccountStore & { sessions: Pick<AccountSessions, 'endAll'> },
  username: string,
  password: string,
): Promise<string | undefined> {
  // A name no account can have is no user, without a look-up (PostgreSQL refuses U+0000 in text).
  const normalized = normalizeUsername(username);
  const row = isValidUsername(normalized) ? await users.findUserByUsername(s.db, normalized) : undefined;
  if (row === undefined) return undefined;
  await validatePassword(s.policy, password);
  const passwordHash = await s.hasher.hash(password);
  await s.db.transaction().execute(async (trx) => {
    await s.sessions.endAll(trx, row.id);
    await users.updatePasswordHash(trx, row.id, passwordHash, nowIso());
  });
  await audit(s, {
    kind: 'password_reset',
    outcome: 'success',
    userId: row.id,
    username: row.username,
    detail: 'by the vellum CLI; all sessions ended',
  });
  return row.username;
}

export async function getUser(s: AccountServices, userId: string): Promise<User> {
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  return toUser(row);
}

/** GET /auth/me: the public user, and whether it has a password (single sign-on and unfinished administrator-made accounts do not). */
export async function getOwnAccount(s: AccountServices, userId: string): Promise<User & { has_password: boolean }> {
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  return { ...toUser(row), has_password: typeof row.password_hash === 'string' && row.password_hash !== '' };
}

/** Spec §4.1 rule 3: old password first (401), then the new one's validation (400). */
export async function changePassword(
  s: AccountServices,
  caller: Claims,
  oldPassword: string,
  newPassword: string,
  client: ClientInfo,
) {
  const row = await confirmPassword(s, caller, oldPassword, {
    kind: 'password_change',
    client,
    detail: 'wrong old password',
  });
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
    await s.sessions.endAll(trx, row.id);
    await users.updatePasswordHash(trx, row.id, passwordHash, now);
    return s.sessions.open(trx, { id: row.id, admin: row.is_admin }, client);
  });
  s.credentialsRevoked?.(row.id);
  s.securityNotice?.(row.id, 'password', client);
  await audit(s, { ...event, outcome: 'success', detail: `other sessions revoked; new session ${issued.sessionId}` });
  return { issued, user: toUser({ ...row, password_hash: passwordHash, updated_at: now }) };
}

export async function deleteOwnAccount(
  s: AccountServices,
  caller: Claims,
  password: string,
  client: ClientInfo,
): Promise<void> {
  const row = await confirmPassword(s, caller, password, { kind: 'account_delete', client, detail: 'wrong password' });
  await removeUser(s, row.id);
  await audit(s, { kind: 'account_delete', userId: row.id, username: row.username, client, outcome: 'success' });
}

/**
 * Loads the caller (404 when gone) and checks their current password (401, audited), as one
 * attempt of the caller's session (sessions/session-lockout.ts: 429 while it is locked), never
 * of the account's login lockout.
 */
export async function confirmPassword(
  s: AccountServices,
  caller: Claims,
  password: string,
  failure: { kind: AuditEvent['kind']; client: ClientInfo; detail: string },
): Promise<users.UserRow> {
  const row = await users.findUserById(s.db, requireUserId(caller));
  if (row === undefined) throw Errors.userNotFound();
  const right = await s.sessions.checkIn(
    caller,
    async () => passwordLength(password) <= PASSWORD_MAX_LENGTH && (await s.hasher.verify(row.password_hash, password)),
  );
  if (!right) {
    await audit(s, {
      kind: failure.kind,
      userId: row.id,
      username: row.username,
      client: failure.client,
      outcome: 'failure',
      detail: failure.detail,
    });
    throw Errors.invalidCredentials();
  }
  return row;
}

/**
 * Ends every session, then deletes the user and, by cascade, their notes and tokens. The last
 * administrator is refused with 409: before anything changes, unless two deletions race, when the
 * loser's sessions may already have been ended (the account itself stays).
 */
async function removeUser(s: AccountServices, userId: string): Promise<boolean> {
  const target = await users.findUserById(s.db, userId);
  if (target === undefined) return false;
  if (target.is_admin && !(await users.anotherAdminExists(s.db, userId))) throw Errors.lastAdministrator();
  await s.checkpoint?.('delete:checked');
  try {
    await s.db.transaction().execute((trx) => s.sessions.endAll(trx, userId));
  } catch (error) {
    // Spec §3.1: a failure of this step is only logged; the deletion below removes the rows anyway.
    s.log.error({ err: error, userId }, 'revoking refresh tokens before deletion failed');
  }
  const outcome = await s.db.transaction().execute(async (trx) => {
    const locked = await users.lockForDeletion(trx, userId);
    await s.checkpoint?.('delete:locked');
    if (!locked.exists) return 'missing';
    if (locked.isAdmin && locked.admins <= 1) return 'last-admin';
    // Their unused invitations go with them (revokeInvitationsMadeBy says why).
    await invitations.revokeInvitationsMadeBy(trx, userId);
    await users.deleteUser(trx, userId);
    return 'deleted';
  });
  // Even when the deletion did not happen, the sessions were ended above.
  s.credentialsRevoked?.(userId);
  if (outcome === 'last-admin') throw Errors.lastAdministrator();
  return outcome === 'deleted';
}

/** The event names the administrator who acted (null: a token whose sub is not an id); the deleted user is in its detail. */
export async function adminDeleteUser(
  s: AccountServices,
  actorId: string | null,
  id: string,
  client: ClientInfo,
): Promise<void> {
  const deleted = await removeUser(s, id);
  await audit(s, {
    kind: 'admin_delete_user',
    outcome: deleted ? 'success' : 'failure',
    userId: actorId,
    client,
    detail: deleted ? `user ${id}` : `user ${id} not found`,
  });
  if (!deleted) throw Errors.userNotFound();
}
