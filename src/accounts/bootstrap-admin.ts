import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { createAdmin, type AccountStore } from './accounts.service.js';
import * as users from './user.repository.js';
import { normalizeUsername } from './username.js';

export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

export type BootstrapOutcome = 'admin-exists' | 'created' | 'no-credentials';

/**
 * Spec §1: when no administrator exists, create one from ADMIN_USERNAME/ADMIN_PASSWORD with the
 * same validation as signup. Invalid credentials stop start-up (BootstrapError) with the reason.
 */
export async function bootstrapAdmin(s: AccountStore, admin: Config['admin']): Promise<BootstrapOutcome> {
  if (await users.adminExists(s.db)) return 'admin-exists';
  if (admin === undefined) {
    s.log.warn('no administrator exists and ADMIN_USERNAME/ADMIN_PASSWORD are not set; none was created');
    return 'no-credentials';
  }
  try {
    const { username } = await createAdmin(s, admin.username, admin.password, 'start-up (ADMIN_USERNAME)');
    s.log.info({ username }, 'created the administrator account');
    return 'created';
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code !== 'username_taken') throw new BootstrapError(`ADMIN credentials are invalid: ${error.detail}`);
    // Another instance starting at the same moment may have just created it.
    if (await users.adminExists(s.db)) return 'admin-exists';
    throw new BootstrapError(
      `ADMIN_USERNAME "${normalizeUsername(admin.username)}" already belongs to a non-admin account; choose another name`,
    );
  }
}
