import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/schema.js';
import type { Page } from '../shared/page.js';
import { newId, normalizeId } from '../shared/ids.js';
import * as events from './audit.repository.js';
import type { ClientInfo } from '../shared/client-info.js';

/** Every kind of event the trail holds; the admin filter accepts exactly these. */
export const EVENT_KINDS = [
  'signup',
  'admin_create',
  'login',
  'refresh',
  'refresh_reuse',
  'password_change',
  'password_reset',
  'logout',
  'account_delete',
  'admin_list_users',
  'admin_view_user',
  'admin_delete_user',
  'session_revoke',
  'mfa_enrol',
  'mfa_remove',
  'recovery_codes',
  'admin_remove_mfa',
  'token_create',
  'token_revoke',
  'admin_invite',
  'admin_invite_revoke',
  'admin_create_user',
  'admin_update_user',
  'admin_setup_link',
  'account_setup',
  'email_change',
  'password_reset_request',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface AuditEvent {
  kind: EventKind;
  outcome: 'success' | 'failure';
  /** Who acted (or, for a login attempt, the account tried); null when unknown. */
  userId?: string | null;
  username?: string | null;
  client?: ClientInfo;
  /** Plain facts such as "wrong password" or "session <id>"; never a password or a token. */
  detail?: string;
}

export interface AuthEvent {
  id: string;
  user_id: string | null;
  username: string | null;
  kind: string;
  outcome: string;
  ip_address: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: string;
}

/**
 * Records an event. The trail must never cost the user their request: a failure to write it is
 * logged and swallowed. Called outside transactions, so that a failed insert cannot abort one.
 */
export async function audit(s: { db: Db; log: FastifyBaseLogger }, event: AuditEvent): Promise<void> {
  try {
    await events.recordEvent(s.db, {
      id: newId(),
      user_id: event.userId ?? null,
      username: event.username ?? null,
      kind: event.kind,
      outcome: event.outcome,
      ip_address: event.client?.ip ?? null,
      user_agent: event.client?.userAgent?.slice(0, 512) ?? null,
      detail: event.detail ?? null,
      created_at: new Date().toISOString(),
    });
  } catch (error) {
    s.log.error(
      { err: error, kind: event.kind, outcome: event.outcome, userId: event.userId },
      'recording an auth event failed',
    );
  }
}

export interface EventQuery {
  user_id?: string | undefined;
  kind?: string | undefined;
}

/** Newest first; the filters are valid (the route schema: a UUID, one of EVENT_KINDS). */
export async function listEvents(db: Db, query: EventQuery, page: Page): Promise<AuthEvent[]> {
  const filter = { userId: query.user_id === undefined ? undefined : normalizeId(query.user_id), kind: query.kind };
  const rows = await events.listEvents(db, filter, page.limit, page.offset);
  return rows.map((row) => ({
    id: row.id,
    user_id: row.user_id,
    username: row.username,
    kind: row.kind,
    outcome: row.outcome,
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    detail: row.detail,
    created_at: row.created_at,
  }));
}
