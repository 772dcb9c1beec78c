import { audit } from '../audit/audit.service.js';
import { nowIso } from '../db/values.js';
import { isUniqueViolation } from '../db/values.js';
import { Errors } from '../errors.js';
import { hashLinkToken, newLinkToken, revokeInvitationsMadeBy } from '../invitations/invitations.service.js';
import { validatePassword } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import type { Mailer } from '../mail/mailer.js';
import type { AccountServices, NewSession } from './accounts.service.js';
import * as setups from './setup.repository.js';
import { toUser, type User } from './user.js';
import * as users from './user.repository.js';
import { validUsername } from './username.js';

/** A set-up link stays valid this long (CONTRACT.md: 7 days). */
export const SETUP_LINK_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What an administrator sees of an account besides the User fields. */
export interface AccountFacts {
  totp: boolean;
  passkeys: number;
  storageUsedBytes: number;
}

/** The facts of these accounts, from the folders that own them (given by app.ts: mfa, attachments). */
export type FindAccountFacts = (ids: string[]) => Promise<Map<string, AccountFacts>>;

export interface AdminUser extends User {
  disabled: boolean;
  mfa: { totp: boolean; passkeys: number };
  last_login_at: string | null;
  storage_used_bytes: number;
  /** null: STORAGE_QUOTA_BYTES applies; 0: unlimited. */
  storage_quota_bytes: number | null;
}

const NO_FACTS: AccountFacts = { totp: false, passkeys: 0, storageUsedBytes: 0 };

/** The one place an account becomes an administrator's row (User, which carries `email`, and more). */
export function toAdminUser(row: users.UserRow, facts: AccountFacts = NO_FACTS): AdminUser {
  return {
    ...toUser(row),
    disabled: row.disabled,
    mfa: { totp: facts.totp, passkeys: facts.passkeys },
    last_login_at: row.last_login_at,
    storage_used_bytes: facts.storageUsedBytes,
    storage_quota_bytes: row.storage_quota_bytes,
  };
}

export async function listAdminUsers(
  s: AccountServices,
  facts: FindAccountFacts,
  actorId: string | null,
  limit: number,
  offset: number,
  client: ClientInfo,
): Promise<AdminUser[] | null> {
  const rows = await users.listUsers(s.db, limit, offset);
  await audit(s, {
    kind: 'admin_list_users',
    outcome: 'success',
    userId: actorId,
    client,
    detail: `limit ${limit} offset ${offset}`,
  });
  if (rows.length === 0) return null;
  const known = await facts(rows.map((row) => row.id));
  return rows.map((row) => toAdminUser(row, known.get(row.id)));
}

/**
 * GET /auth/admin/{id}: one account exactly as its row in the list reads. Audited like the list:
 * an administrator reading an account's facts is an administrator action.
 */
export async function getAdminUser(
  s: AccountServices,
  facts: FindAccountFacts,
  actorId: string | null,
  userId: string,
  client: ClientInfo,
): Promise<AdminUser> {
  const row = await users.findUserById(s.db, userId);
  const event = { kind: 'admin_view_user', userId: actorId, client } as const;
  if (row === undefined) {
    await audit(s, { ...event, outcome: 'failure', detail: `user ${userId} not found` });
    throw Errors.userNotFound();
  }
  await audit(s, { ...event, outcome: 'success', detail: `user ${userId}` });
  return toAdminUser(row, (await facts([userId])).get(userId));
}

/** A single-use link (SETUP_LINK_DAYS) where the account chooses its password; replaces an earlier one. */
async function newSetupLink(s: AccountServices, publicUrl: string, userId: string) {
  const token = newLinkToken();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + SETUP_LINK_DAYS * DAY_MS).toISOString();
  await setups.replaceSetupLink(s.db, {
    id: newId(),
    user_id: userId,
    token_hash: hashLinkToken(token),
    created_at: now.toISOString(),
    expires_at: expiresAt,
    used_at: null,
  });
  return { setup_url: `${publicUrl}/setup?token=${encodeURIComponent(token)}`, expires_at: expiresAt };
}

/**
 * An account an administrator creates: no password yet (an empty hash, which nothing verifies), and a
 * set-up link to hand over. The username follows signup's rule (400) and must be free (409). With
 * `email` and SMTP, the link is also mailed there (as an invitation is); the address is not the
 * account's: only its owner confirms one (Account → E-mail address).
 */
export async function adminCreateUser(
  s: AccountServices & { mailer?: Mailer },
  publicUrl: string,
  actorId: string | null,
  input: { username: string; email?: string | undefined; admin?: boolean | undefined },
  client: ClientInfo,
): Promise<{ user: AdminUser; setup_url: string; mailed: boolean }> {
  const username = validUsername(input.username);
  const now = nowIso();
  const id = newId();
  const row = { id, username, password_hash: '', is_admin: input.admin ?? false, created_at: now, updated_at: now };
  try {
    await users.insertUser(s.db, row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      await audit(s, {
        kind: 'admin_create_user',
        outcome: 'failure',
        userId: actorId,
        client,
        detail: `${username}: taken`,
      });
      throw Errors.usernameTaken();
    }
    throw error;
  }
  const link = await newSetupLink(s, publicUrl, id);
  const mailed = input.email !== undefined && s.mailer?.enabled === true;
  await audit(s, {
    kind: 'admin_create_user',
    outcome: 'success',
    userId: actorId,
    client,
    detail:
      `user ${id} (${username})${row.is_admin ? ', administrator' : ''}; set-up link until ${link.expires_at}` +
      (mailed ? '; mailed' : ''),
  });
  if (mailed) {
    // Not awaited: a slow mail server must not hold the administrator's answer, which has the link anyway.
    void s.mailer!.send({
      to: input.email!,
      subject: 'Your Vellum account',
      text:
        `An administrator made you an account on Vellum, a notes service, at ${publicUrl}. Your username is "${username}".\n\n` +
        `Choose your password here (the link works once, until ${link.expires_at}):\n${link.setup_url}\n\n` +
        'If you did not expect this, ignore this mail.',
    });
  }
  const created = await users.findUserById(s.db, id);
  return { user: toAdminUser(created!), setup_url: link.setup_url, mailed };
}

/** A new set-up link for an account that has no password yet (409 otherwise: that is a password reset). */
export async function adminSetupLink(
  s: AccountServices,
  publicUrl: string,
  actorId: string | null,
  userId: string,
  client: ClientInfo,
): Promise<{ setup_url: string; expires_at: string }> {
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  if (row.password_hash !== '') throw Errors.accountHasPassword();
  const link = await newSetupLink(s, publicUrl, userId);
  await audit(s, {
    kind: 'admin_setup_link',
    outcome: 'success',
    userId: actorId,
    client,
    detail: `user ${userId}; until ${link.expires_at}`,
  });
  return link;
}

/**
 * POST /auth/setup: the link's account chooses its password (signup's rules, 400 each) and is
 * signed in, as a login would be. The link is used in the same transaction that sets the password,
 * so of two uses one wins; an unknown, used, replaced or expired link is 400 setup_link_invalid.
 */
export async function completeSetup(
  s: AccountServices,
  token: string,
  password: string,
  client: ClientInfo,
): Promise<{ issued: NewSession; user: User }> {
  const found = await setups.findUsableSetup(s.db, hashLinkToken(token), nowIso());
  const row = found === undefined ? undefined : await users.findUserById(s.db, found.user_id);
  if (found === undefined || row === undefined || row.disabled) {
    await audit(s, { kind: 'account_setup', outcome: 'failure', client, detail: 'invalid set-up link' });
    throw Errors.setupLinkInvalid();
  }
  await validatePassword(s.policy, password);
  const passwordHash = await s.hasher.hash(password);
  const now = nowIso();
  const issued = await s.db.transaction().execute(async (trx) => {
    if (!(await setups.useSetup(trx, found.id, now))) return undefined;
    await s.sessions.endAll(trx, row.id);
    await users.updatePasswordHash(trx, row.id, passwordHash, now);
    await users.recordLogin(trx, row.id, now);
    return s.sessions.open(trx, { id: row.id, admin: row.is_admin }, client);
  });
  if (issued === undefined) {
    await audit(s, {
      kind: 'account_setup',
      outcome: 'failure',
      userId: row.id,
      client,
      detail: 'link used meanwhile',
    });
    throw Errors.setupLinkInvalid();
  }
  await audit(s, {
    kind: 'account_setup',
    outcome: 'success',
    userId: row.id,
    username: row.username,
    client,
    detail: `password chosen; session ${issued.sessionId}`,
  });
  return { issued, user: toUser({ ...row, password_hash: passwordHash, updated_at: now }) };
}

export interface AdministrationPatch {
  is_admin?: boolean | undefined;
  disabled?: boolean | undefined;
  /** null: back to STORAGE_QUOTA_BYTES. */
  storage_quota_bytes?: number | null | undefined;
}

/**
 * PATCH /auth/admin/{id}. Decided under the locks of the account's row and every administrator's,
 * so two administrators demoting or disabling each other at once cannot leave none: the last
 * enabled administrator cannot lose the role or be disabled (409). Disabling ends every session of
 * the account in the same transaction; its live streams end right after the commit.
 */
export async function adminUpdateUser(
  s: AccountServices,
  facts: FindAccountFacts,
  actorId: string | null,
  userId: string,
  patch: AdministrationPatch,
  client: ClientInfo,
): Promise<AdminUser> {
  const changes: { is_admin?: boolean; disabled?: boolean; storage_quota_bytes?: number | null } = {};
  if (patch.is_admin !== undefined) changes.is_admin = patch.is_admin;
  if (patch.disabled !== undefined) changes.disabled = patch.disabled;
  if (patch.storage_quota_bytes !== undefined) changes.storage_quota_bytes = patch.storage_quota_bytes;
  const event = { kind: 'admin_update_user', userId: actorId, client } as const;
  const said = describePatch(changes);
  let revoked = 0;
  const outcome = await s.db.transaction().execute(async (trx) => {
    const { target, enabledAdmins } = await users.lockForAdministration(trx, userId);
    await s.checkpoint?.('admin-update:locked');
    if (target === undefined) return 'missing' as const;
    const wasActiveAdmin = target.is_admin && !target.disabled;
    const staysActiveAdmin = (changes.is_admin ?? target.is_admin) && !(changes.disabled ?? target.disabled);
    if (wasActiveAdmin && !staysActiveAdmin && enabledAdmins <= 1) return 'last-admin' as const;
    const disabling = changes.disabled === true && !target.disabled;
    const enabling = changes.disabled === false && target.disabled;
    if (disabling) await s.sessions.endAll(trx, userId);
    revoked = wasActiveAdmin && !staysActiveAdmin ? await revokeInvitationsMadeBy(trx, userId) : 0;
    const now = nowIso();
    // Access tokens issued before this belong to sessions the disabling ended (accounts/account-status.ts).
    if (Object.keys(changes).length > 0)
      await users.updateAdministration(trx, userId, enabling ? { ...changes, reenabled_at: now } : changes, now);
    return disabling ? ('disabled' as const) : enabling ? ('enabled' as const) : ('changed' as const);
  });
  if (outcome === 'missing') {
    await audit(s, { ...event, outcome: 'failure', detail: `user ${userId} not found` });
    throw Errors.userNotFound();
  }
  if (outcome === 'last-admin') {
    await audit(s, { ...event, outcome: 'failure', detail: `user ${userId}: ${said}: the last administrator` });
    throw Errors.lastAdministratorChange();
  }
  // Before the answer: this instance forgets what it knew of the account, and tells the others.
  if (outcome === 'disabled' || outcome === 'enabled') s.credentialsRevoked?.(userId);
  await audit(s, {
    ...event,
    outcome: 'success',
    detail: `user ${userId}: ${said}${outcome === 'disabled' ? '; every session ended' : ''}${revoked > 0 ? `; ${revoked} open invitation${revoked === 1 ? '' : 's'} of theirs revoked` : ''}`,
  });
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  return toAdminUser(row, (await facts([userId])).get(userId));
}

function describePatch(changes: AdministrationPatch): string {
  const parts: string[] = [];
  if (changes.is_admin !== undefined) parts.push(changes.is_admin ? 'made administrator' : 'administrator removed');
  if (changes.disabled !== undefined) parts.push(changes.disabled ? 'disabled' : 'enabled');
  if (changes.storage_quota_bytes !== undefined)
    parts.push(
      changes.storage_quota_bytes === null
        ? 'storage quota: the default'
        : `storage quota: ${changes.storage_quota_bytes} bytes`,
    );
  return parts.length === 0 ? 'nothing changed' : parts.join(', ');
}
