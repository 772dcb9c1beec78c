import type { Db } from '../db/schema.js';
import { pruneRefreshTokens } from './refresh-token.repository.js';

/** Refresh tokens that can never be used again (expired, or revoked in a session that is over). */
export async function pruneDeadRefreshTokens(db: Db, now: Date): Promise<{ tokens: number }> {
  return { tokens: await pruneRefreshTokens(db, now.toISOString()) };
}
