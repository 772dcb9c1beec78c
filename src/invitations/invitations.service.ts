import { createHash, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { audit } from '../audit/audit.service.js';
import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import * as store from './invitations.repository.js';
import type { Mailer } from '../mail/mailer.js';

export interface InvitationServices {
  db: Db;
  log: FastifyBaseLogger;
  /** PUBLIC_URL: where the sign-up page is. */
  publicUrl: string;
  /** Mails an invitation made for an e-mail address (SMTP_URL); without SMTP the administrator hands the link over. */
  mailer?: Mailer;
}

export const DEFAULT_INVITATION_DAYS = 7;
/** The most GET /auth/admin/invitations lists. */
export const INVITATIONS_LISTED = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

/** 256 random bits; only its SHA-256 is stored, so a copy of the database lets nobody in. */
export const newLinkToken = (): string => randomBytes(32).toString('base64url');
export const hashLinkToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export interface Invitation {
  id: string;
  email: string | null;
  admin: boolean;
  expires_at: string;
  created_at: string;
}

const toInvitation = (row: store.InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  admin: row.admin,
  expires_at: row.expires_at,
  created_at: row.created_at,
});

export const invitationUrl = (publicUrl: string, token: string) =>
  `${publicUrl}/signup?invitation=${encodeURIComponent(token)}`;

/** A new single-use invitation; the token is in the answer and nowhere else. */
export async function createInvitation(
  s: InvitationServices,
  actorId: string | null,
  input: { email?: string | undefined; admin?: boolean | undefined; expiresInDays?: number | undefined },
  client: ClientInfo,
): Promise<Invitation & { token: string; url: string }> {
  const token = newLinkToken();
  const now = new Date();
  const row = {
    id: newId(),
    token_hash: hashLinkToken(token),
    email: input.email ?? null,
    admin: input.admin ?? false,
    created_by: actorId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + (input.expiresInDays ?? DEFAULT_INVITATION_DAYS) * DAY_MS).toISOString(),
    used_at: null,
    used_by: null,
  };
  await store.insertInvitation(s.db, row);
  await audit(s, {
    kind: 'admin_invite',
    outcome: 'success',
    userId: actorId,
    client,
    detail: `invitation ${row.id}${row.admin ? ' (administrator)' : ''}; expires ${row.expires_at}`,
  });
  const url = invitationUrl(s.publicUrl, token);
  if (row.email !== null && s.mailer?.enabled === true) {
    // Not awaited: a slow mail server must not hold the administrator's answer, which has the link anyway.
    void s.mailer.send({
      to: row.email,
      subject: 'You are invited to Vellum',
      text:
        `You are invited to make an account on Vellum, a notes service, at ${s.publicUrl}.\n\n` +
        `Choose a username and a password here (the link works once, until ${row.expires_at}):\n${url}\n\n` +
        'If you did not expect this, ignore this mail.',
    });
  }
  return { ...toInvitation(row), token, url };
}

export async function listInvitations(s: InvitationServices): Promise<Invitation[]> {
  return (await store.listOpenInvitations(s.db, nowIso(), INVITATIONS_LISTED)).map(toInvitation);
}

export async function revokeInvitation(
  s: InvitationServices,
  actorId: string | null,
  id: string,
  client: ClientInfo,
): Promise<void> {
  const deleted = await store.deleteOpenInvitation(s.db, id);
  await audit(s, {
    kind: 'admin_invite_revoke',
    outcome: deleted ? 'success' : 'failure',
    userId: actorId,
    client,
    detail: deleted ? `invitation ${id}` : `invitation ${id} not found or already used`,
  });
  if (!deleted) throw Errors.invitationNotFound();
}

/**
 * The unused invitations an administrator made stop working when they stop being one (demoted,
 * disabled or deleted): a link they kept must not let anyone in on their word, least of all as an
 * administrator. In the caller's transaction, the one that takes the role away; how many.
 */
export function revokeInvitationsMadeBy(db: Db, userId: string): Promise<number> {
  return store.deleteOpenInvitationsMadeBy(db, userId);
}

/** The invitation this token names, if it can still be used (sign-up checks it before any hashing). */
export async function findUsable(db: Db, token: string): Promise<{ id: string; admin: boolean } | undefined> {
  const row = await store.findUsableInvitation(db, hashLinkToken(token), nowIso());
  return row === undefined ? undefined : { id: row.id, admin: row.admin };
}

/** Uses the invitation for `userId` inside the caller's transaction; false when it was used meanwhile. */
export function redeem(db: Db, id: string, userId: string): Promise<boolean> {
  return store.redeemInvitation(db, id, userId, nowIso());
}
