import type { Config } from '../config.js';
import type { Db } from '../db/schema.js';
import { deleteEventsBefore } from './audit.repository.js';

/**
 * Audit retention: events older than AUDIT_RETENTION_DAYS are deleted. Failed logins from anyone
 * write a row each, so without this the trail grows for ever.
 */
export async function pruneAuditEvents(
  db: Db,
  now: Date,
  config: Pick<Config, 'auditRetentionDays'>,
): Promise<{ events: number }> {
  const cutoff = new Date(now.getTime() - config.auditRetentionDays * 86_400_000).toISOString();
  return { events: await deleteEventsBefore(db, cutoff) };
}
