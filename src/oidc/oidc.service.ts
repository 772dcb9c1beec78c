import type { AccountServices } from '../accounts/accounts.service.js';
import * as users from '../accounts/user.repository.js';
import { audit } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import { openSession, type SessionServices } from '../sessions/sessions.service.js';
import * as invitations from '../invitations/invitations.service.js';
import * as identities from './identities.repository.js';
import type { OidcClaims } from './oidc-client.js';
import { usernameCandidates, usernameFromClaim } from './oidc-username.js';

export type OidcServices = AccountServices & SessionServices;

/** Thrown inside the account-creating transaction when its invitation was used by someone else first. */
class InvitationUsed extends Error {}

/**
 * Whether single sign-on may create an account for someone new, and with which invitation: under
 * SIGNUP=open anyone may; under invite or closed only with an invitation carried through the
 * login (GET /oidc/login?invitation=…). An invitation that was carried but cannot be used
 * (unknown, used, revoked, expired) is refused in every mode, as sign-up refuses it.
 */
async function mayCreate(
  s: OidcServices,
  config: Config,
  token: string | undefined,
  client: ClientInfo,
): Promise<{ id: string; admin: boolean } | null> {
  const event = { kind: 'signup', outcome: 'failure', client } as const;
  if (token === undefined) {
    if (config.signup === 'open') return null;
    await audit(s, { ...event, detail: `single sign-on: SIGNUP=${config.signup}, no invitation` });
    throw config.signup === 'closed' ? Errors.oidcSignupClosed() : Errors.oidcInvitationRequired();
  }
  const found = await invitations.findUsable(s.db, token);
  if (found === undefined) {
    await audit(s, { ...event, detail: 'single sign-on: invalid invitation' });
    throw Errors.invitationRequired();
  }
  return found;
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
export async function signInWithOidc(
  s: OidcServices,
  config: Config,
  who: OidcClaims,
  client: ClientInfo,
  invitation?: string,
) {
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
    // An invitation carried by someone who already has an account stays unused (above).
    const invited = await mayCreate(s, config, invitation, client);
    // The admin group, when set, decides at every sign-in; else the invitation does.
    row = await createLinkedAccount(s, config, who, admin ?? invited?.admin ?? false, client, invited);
  }
  return openSession(s, row, client, 'single sign-on');
}

async function createLinkedAccount(
  s: OidcServices,
  config: Config,
  who: OidcClaims,
  isAdmin: boolean,
  client: ClientInfo,
  invitation: { id: string } | null,
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
        if (invitation !== null && !(await invitations.redeem(trx, invitation.id, row.id))) throw new InvitationUsed();
      });
    } catch (error) {
      if (error instanceof InvitationUsed) {
        await audit(s, {
          kind: 'signup',
          outcome: 'failure',
          client,
          detail: 'single sign-on: invitation used meanwhile',
        });
        throw Errors.invitationRequired();
      }
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
      detail:
        `single sign-on (${who.issuer})` +
        (invitation === null ? '' : `; invitation ${invitation.id}`) +
        (isAdmin ? '; administrator' : ''),
    });
    return (await users.findUserById(s.db, row.id)) ?? row;
  }
  throw Errors.usernameTaken();
}
