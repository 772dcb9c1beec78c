import type { Trx } from '../db/schema.js';
import { voidResetLinks } from '../recovery/recovery.service.js';
import { endAllSessions } from '../sessions/sessions.service.js';

/**
 * What "every session of the account ends" means wherever the account was taken back (a password
 * change or reset, a set-up, a disabling, `vellum reset-password`): its sessions end, and so do its
 * password-reset links, so that a link mailed before (to a mailbox someone else may read) cannot
 * undo it. In the caller's transaction.
 */
export async function endEverySession(trx: Trx, userId: string): Promise<void> {
  await endAllSessions(trx, userId);
  await voidResetLinks(trx, userId);
}
