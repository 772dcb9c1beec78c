import type { AccountServices } from '../accounts/accounts.service.js';
import * as users from '../accounts/user.repository.js';
import { audit } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import { openSession, type SessionServices } from '../sessions/sessions.service.js';
import * as identities from './identities.repository.js';
import type { OidcClaims } from './oidc-client.js';
import { usernameCandidates, usernameFromClaim } from './oidc-username.js';

export type OidcServices = AccountServices & SessionServices;

/**
 * Whether single sign-on may create an account for someone new. SIGNUP (open | invite | closed) is
 * teams-a's setting: read here when the configuration has it, else sign-up is open, as it is
 * without SIGNUP. TODO(teams-a merge): read `config.signup` directly, and carry an invitation
 * through the login (the contract's "or an invitation is carried through").
 */
export function ssoMayCreateAccounts(config: Config): boolean {
  const signup = (config as Config & { signup?: string }).signup;
  return signup !== 'closed';
}

/** Whether the claims put the person in OIDC_ADMIN_GROUP (the `groups` claim: an array, or one string). */
function inAdminGroup(config: Config, claims: Record<string, unknown>): boolean | undefined {
  const group = config.oidc?.adminGroup ?? null;
  if (group === null) return undefined;
  const groups = claims.groups;
  const list = Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [];
  // Keycloak sends paths ("/admins") when "full group path" is on.
  return list.some((g) => g === group || g === `/${group}`);
}

/**
 * Signs in the person the provider vouched for: the account linked to issuer + subject, or a new
 * one (when sign-up allows) named from OIDC_USERNAME_CLAIM. A name or address that matches an
 * existing account never links to it; the new account gets another name. With OIDC_ADMIN_GROUP
 * set, the group decides administrator rights at every sign-in (the last administrator is never
 * demoted). Then exactly what a password login does: a session, audited.
 */
export async function signInWithOidc(s: OidcServices, config: Config, who: OidcClaims, client: ClientInfo) {
  const admin = inAdminGroup(config, who.claims);
  const identity = await identities.findIdentity(s.db, who.issuer, who.subject);
  let row: users.UserRow | undefined;
  if (identity !== undefined) {
    row = await users.findUserById(s.db, identity.user_id);
    if (row === undefined) throw Errors.invalidCredentials();
    const now = nowIso();
    await identities.touchIdentity(s.db, identity.id, now);
    if (admin !== undefined && admin !== row.is_admin) {
      if (admin || (await users.anotherAdminExists(s.db, row.id))) {
        await users.setAdmin(s.db, row.id, admin, now);
        await audit(s, {
          kind: 'admin_create',
          outcome: 'success',
          userId: row.id,
          username: row.username,
          client,
          detail: admin
            ? 'made an administrator by the OIDC admin group'
            : 'no longer in the OIDC admin group: not an administrator',
        });
        row = { ...row, is_admin: admin, updated_at: now };
      }
    }
  } else {
    if (!ssoMayCreateAccounts(config)) {
      await audit(s, { kind: 'signup', outcome: 'failure', client, detail: 'single sign-on: sign-up is closed' });
      throw Errors.oidcSignupClosed();
    }
    row = await createLinkedAccount(s, config, who, admin === true, client);
  }
  return openSession(s, row, client, 'single sign-on');
}

async function createLinkedAccount(
  s: OidcServices,
  config: Config,
  who: OidcClaims,
  isAdmin: boolean,
  client: ClientInfo,
): Promise<users.UserRow> {
  const base = usernameFromClaim(who.claims[config.oidc?.usernameClaim ?? 'preferred_username']);
  for (const username of usernameCandidates(base)) {
    if ((await users.findUserByUsername(s.db, username)) !== undefined) continue;
    const now = nowIso();
    const row: users.UserRow = {
      id: newId(),
      username,
      // No password: no password verifies an empty hash (passwords/password-hasher.ts); a reset link sets one.
      password_hash: '',
      is_admin: isAdmin,
      session_generation: 0,
      created_at: now,
      updated_at: now,
      email: null,
      disabled: false,
      last_login_at: null,
      storage_quota_bytes: null,
      reenabled_at: null,
    };
    try {
      await s.db.transaction().execute(async (trx) => {
        await users.insertUser(trx, {
          id: row.id,
          username,
          password_hash: '',
          is_admin: isAdmin,
          created_at: now,
          updated_at: now,
        });
        await identities.insertIdentity(trx, {
          id: newId(),
          user_id: row.id,
          issuer: who.issuer,
          subject: who.subject,
          created_at: now,
          last_login_at: now,
        });
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // The same person signing in twice at once: the other request linked them; use its account.
      const linked = await identities.findIdentity(s.db, who.issuer, who.subject);
      if (linked !== undefined) {
        const existing = await users.findUserById(s.db, linked.user_id);
        if (existing !== undefined) return existing;
      }
      continue; // someone took the name meanwhile: the next one
    }
    await audit(s, {
      kind: 'signup',
      outcome: 'success',
      userId: row.id,
      username,
      client,
      detail: `single sign-on (${who.issuer})${isAdmin ? '; administrator by the OIDC admin group' : ''}`,
    });
    return (await users.findUserById(s.db, row.id)) ?? row;
  }
  throw Errors.usernameTaken();
}
