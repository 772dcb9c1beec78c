import { liveTokenIds } from '../access-tokens/tokens.service.js';
import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';
import { liveAccessTokens } from '../sessions/refresh-token.repository.js';

/**
 * What a stream was opened with: an access token (its session must stay alive) or a personal
 * access token (it must stay, unexpired). A stream whose credential stops being valid ends.
 */
export type StreamCredential =
  | { kind: 'session'; userId: string; jti: string }
  | { kind: 'personal'; userId: string; tokenId: string };

/** Credentials asked about per statement, at most (an IN list: SQLite binds at most 32,766 values). */
const CHUNK = 500;

/** Of these credentials, the ones still valid: two statements per 500, each an index probe per credential. */
export async function validCredentials(
  db: Db,
  credentials: readonly StreamCredential[],
): Promise<Set<StreamCredential>> {
  const valid = new Set<StreamCredential>();
  const now = nowIso();
  for (let i = 0; i < credentials.length; i += CHUNK) {
    const chunk = credentials.slice(i, i + CHUNK);
    const sessions = chunk.filter((c) => c.kind === 'session');
    const personal = chunk.filter((c) => c.kind === 'personal');
    const [liveJtis, liveTokens] = await Promise.all([
      liveAccessTokens(db, sessions, now),
      liveTokenIds(
        db,
        personal.map((c) => ({ userId: c.userId, id: c.tokenId })),
        now,
      ),
    ]);
    for (const c of sessions) if (liveJtis.has(c.jti)) valid.add(c);
    for (const c of personal) if (liveTokens.has(c.tokenId)) valid.add(c);
  }
  return valid;
}
