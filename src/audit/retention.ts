import type { Config } from '../config.js';
import type { Db } from '../db/schema.js';
import { pruneRefreshTokens } from '../sessions/refresh-token.repository.js';

/**
 * Audit retention: events older than AUDIT_RETENTION_DAYS are deleted. Failed logins from anyone
 * write a row each, so without this the trail grows for ever.
 */
export async function pruneAuditEvents(db: Db, now: Date, config: Pick<Config, 'auditRetentionDays'>): Promise<{ events: number }> {
  const cutoff = new Date(now.getTime() - config.auditRetentionDays * 86_400_000).toISOString();
  const result = await db.deleteFrom('auth_events').where('created_at', '<', cutoff).executeTakeFirst();
  return { events: Number(result.numDeletedRows) };
}

/** Refresh tokens that can never be used again (expired, or revoked in a session that is over). */
export async function pruneDeadRefreshTokens(db: Db, now: Date): Promise<{ tokens: number }> {
  return { tokens: await pruneRefreshTokens(db, now.toISOString()) };
}
