import { createHash, randomBytes } from 'node:crypto';
import type { AccountServices } from '../accounts/accounts.service.js';
import { normalizeEmail } from '../accounts/email.js';
import { toUser, type User } from '../accounts/user.js';
import * as users from '../accounts/user.repository.js';
import { isValidUsername, normalizeUsername } from '../accounts/username.js';
import { audit } from '../audit/audit.service.js';
import type { Trx } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { Mailer } from '../mail/mailer.js';
import { validatePassword } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import * as links from './account-links.repository.js';

/** A reset link is good for 30 minutes (contract, "Password reset"). */
export const RESET_LINK_MS = 30 * 60 * 1000;
/** A confirmation link for a new e-mail address is good for a day. */
export const EMAIL_LINK_MS = 24 * 60 * 60 * 1000;

export interface RecoveryServices extends AccountServices {
  mailer: Mailer;
  /** PUBLIC_URL: links point at the web client's pages there. */
  publicUrl: string;
}

/** 256 random bits; only the SHA-256 is stored, so the table alone opens nothing. */
function newToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

function resetUrl(s: RecoveryServices, token: string): string {
  return `${s.publicUrl}/reset?token=${encodeURIComponent(token)}`;
}

/** A username, or else a verified e-mail address. Names and addresses no account can have are no one, without a look-up. */
async function findByLogin(s: RecoveryServices, login: string): Promise<users.UserRow | undefined> {
  if (login.includes('@')) {
    const email = normalizeEmail(login);
    return email === null ? undefined : users.findUserByEmail(s.db, email);
  }
  const username = normalizeUsername(login);
  return isValidUsername(username) ? users.findUserByUsername(s.db, username) : undefined;
}

async function makeResetLink(s: RecoveryServices, userId: string, token: { hash: string }) {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + RESET_LINK_MS).toISOString();
  await s.db.transaction().execute(async (trx) => {
    // One live link per person: a newer request voids the older ones.
    await links.voidLinks(trx, userId, 'password_reset', now.toISOString());
    await links.insertLink(trx, {
      id: newId(),
      user_id: userId,
      purpose: 'password_reset',
      token_hash: token.hash,
      email: null,
      expires_at: expiresAt,
      used_at: null,
      created_at: now.toISOString(),
    });
  });
  return expiresAt;
}

/**
 * Voids the account's unused reset links in the caller's transaction. The composition (app.ts,
 * cli.ts) runs it wherever every session of an account ends (a password change, a reset, a set-up,
 * a disabling, `vellum reset-password`): a link made before cannot undo what the owner, or an
 * administrator, just did to take the account back.
 */
export function voidResetLinks(trx: Trx, userId: string): Promise<void> {
  return links.voidLinks(trx, userId, 'password_reset', nowIso());
}

/**
 * POST /password-reset: always the same 202, whoever asks, after the same work: a token drawn and
 * hashed, one account read, one audit event written. Only an account with a verified address, on a
 * server that sends mail, then gets a link stored and mailed, both after the answer (`mailResetLink`),
 * so neither the write nor the SMTP round trip shows in the answer's time.
 */
export async function requestPasswordReset(s: RecoveryServices, login: string, client: ClientInfo): Promise<void> {
  const token = newToken();
  const row = await findByLogin(s, login);
  const email = row?.email ?? null;
  if (row === undefined || email === null || !s.mailer.enabled) {
    await audit(s, {
      kind: 'password_reset_request',
      outcome: 'failure',
      userId: row?.id ?? null,
      client,
      detail: row === undefined ? 'no such account' : email === null ? 'no verified e-mail address' : 'no SMTP_URL',
    });
    return;
  }
  await audit(s, {
    kind: 'password_reset_request',
    outcome: 'success',
    userId: row.id,
    username: row.username,
    client,
    detail: 'link mailed',
  });
  void mailResetLink(s, row, email, token).catch((error: unknown) =>
    s.log.error({ err: error, userId: row.id }, 'a password reset link could not be made'),
  );
}

/** After the answer: the link stored (voiding older ones), then mailed. */
async function mailResetLink(
  s: RecoveryServices,
  row: users.UserRow,
  email: string,
  token: { token: string; hash: string },
) {
  await s.checkpoint?.('password-reset:link');
  await makeResetLink(s, row.id, token);
  await s.mailer.send({
    to: email,
    subject: 'Reset your Vellum password',
    text:
      `Someone (hopefully you) asked to reset the password of the Vellum account "${row.username}".\n\n` +
      `Choose a new password here within 30 minutes:\n\n${resetUrl(s, token.token)}\n\n` +
      'If it was not you, ignore this mail: your password stays as it is.\n',
  });
}

/** POST /admin/{id}/password-reset: the same link, handed to the administrator to pass on. */
export async function adminPasswordReset(
  s: RecoveryServices,
  actorId: string | null,
  userId: string,
  client: ClientInfo,
): Promise<{ url: string; expires_at: string }> {
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  const token = newToken();
  const expiresAt = await makeResetLink(s, row.id, token);
  await audit(s, {
    kind: 'password_reset_request',
    outcome: 'success',
    userId: actorId,
    client,
    detail: `link made by an administrator for user ${row.id}`,
  });
  return { url: resetUrl(s, token.token), expires_at: expiresAt };
}

/**
 * POST /password-reset/confirm: like a password change without the old password. The new password
 * is checked before the link is used, so a refused password does not spend it; then, in one
 * transaction, the link is used (once, whoever races), every session ends and the hash changes.
 * Second factors stay: a reset proves the mailbox, not the authenticator.
 */
export async function confirmPasswordReset(
  s: RecoveryServices,
  token: string,
  newPassword: string,
  client: ClientInfo,
): Promise<User> {
  const link = await links.findLink(s.db, 'password_reset', hashToken(token));
  const now = nowIso();
  if (link === undefined || link.used_at !== null || link.expires_at <= now) throw Errors.invalidLink();
  await validatePassword(s.policy, newPassword);
  const passwordHash = await s.hasher.hash(newPassword);
  const updated = await s.db.transaction().execute(async (trx) => {
    const at = nowIso();
    if (!(await links.consumeLink(trx, link.id, at))) return undefined;
    await s.sessions.endAll(trx, link.user_id);
    await users.updatePasswordHash(trx, link.user_id, passwordHash, at);
    await links.voidLinks(trx, link.user_id, 'password_reset', at);
    return users.findUserById(trx, link.user_id);
  });
  if (updated === undefined) throw Errors.invalidLink();
  s.credentialsRevoked?.(updated.id);
  await audit(s, {
    kind: 'password_reset',
    outcome: 'success',
    userId: updated.id,
    username: updated.username,
    client,
    detail: 'by a reset link; all sessions ended',
  });
  s.securityNotice?.(updated.id, 'password-reset', client);
  return toUser(updated);
}

/**
 * PUT /owner/email, after the caller proved it is them (the route reauthenticates): null removes
 * the address at once (200); an address gets a confirmation link by mail and is set only when the
 * link is followed (202). Without SMTP, 409: nobody could ever follow the link.
 */
export async function requestEmailChange(
  s: RecoveryServices,
  row: users.UserRow,
  email: string | null,
  client: ClientInfo,
): Promise<{ removed: User } | { pending: { email: string; expires_at: string; sent: boolean } }> {
  if (email === null) {
    const now = nowIso();
    await s.db.transaction().execute(async (trx) => {
      await users.setEmail(trx, row.id, null, now);
      // A reset link mailed to the address removed stops working: the owner took the mailbox out.
      await links.voidLinks(trx, row.id, 'password_reset', now);
    });
    await audit(s, {
      kind: 'email_change',
      outcome: 'success',
      userId: row.id,
      username: row.username,
      client,
      detail: 'removed',
    });
    return { removed: toUser({ ...row, email: null, updated_at: now }) };
  }
  const normalized = normalizeEmail(email);
  if (normalized === null) throw Errors.invalidEmail();
  if (!s.mailer.enabled) throw Errors.mailUnavailable();
  const token = newToken();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + EMAIL_LINK_MS).toISOString();
  await s.db.transaction().execute(async (trx) => {
    await links.voidLinks(trx, row.id, 'email_confirm', now.toISOString());
    await links.insertLink(trx, {
      id: newId(),
      user_id: row.id,
      purpose: 'email_confirm',
      token_hash: token.hash,
      email: normalized,
      expires_at: expiresAt,
      used_at: null,
      created_at: now.toISOString(),
    });
  });
  const url = `${s.publicUrl}/confirm-email?token=${encodeURIComponent(token.token)}`;
  const sent = await s.mailer.send({
    to: normalized,
    subject: 'Confirm your e-mail address for Vellum',
    text:
      `Confirm that this address belongs to the Vellum account "${row.username}" within 24 hours:\n\n${url}\n\n` +
      'If you did not ask for this, ignore this mail.\n',
  });
  await audit(s, {
    kind: 'email_change',
    outcome: 'success',
    userId: row.id,
    username: row.username,
    client,
    detail: sent === 'sent' ? 'confirmation link mailed' : 'confirmation mail could not be sent',
  });
  return { pending: { email: normalized, expires_at: expiresAt, sent: sent === 'sent' } };
}

/** POST /owner/email/confirm: the link from the mail sets the address (409 when another account verified it first). */
export async function confirmEmail(s: RecoveryServices, token: string, client: ClientInfo): Promise<User> {
  const link = await links.findLink(s.db, 'email_confirm', hashToken(token));
  const now = nowIso();
  if (link === undefined || link.used_at !== null || link.expires_at <= now || link.email === null)
    throw Errors.invalidLink();
  const email = link.email;
  let updated: users.UserRow | undefined;
  try {
    updated = await s.db.transaction().execute(async (trx) => {
      if (!(await links.consumeLink(trx, link.id, now))) return undefined;
      await users.setEmail(trx, link.user_id, email, now);
      // A reset link mailed to the address this one replaces stops working.
      await links.voidLinks(trx, link.user_id, 'password_reset', now);
      return users.findUserById(trx, link.user_id);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw Errors.emailTaken();
    throw error;
  }
  if (updated === undefined) throw Errors.invalidLink();
  await audit(s, {
    kind: 'email_change',
    outcome: 'success',
    userId: updated.id,
    username: updated.username,
    client,
    detail: 'address confirmed',
  });
  return toUser(updated);
}
