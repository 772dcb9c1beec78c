import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { AppError } from '../errors.js';
import { newId } from '../shared/ids.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { validatePassword, type PasswordPolicy } from '../passwords/password-policy.js';
import * as users from './user.repository.js';
import { validUsername } from './username.js';

export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

export type BootstrapOutcome = 'admin-exists' | 'created' | 'no-credentials';

/**
 * Spec §1: when no administrator exists, create one from ADMIN_USERNAME/ADMIN_PASSWORD with the
 * same validation as signup. Invalid credentials stop start-up (BootstrapError) with the reason.
 */
export async function bootstrapAdmin(
  db: Db,
  deps: { admin: Config['admin']; policy: PasswordPolicy; hasher: PasswordHasher; log: FastifyBaseLogger },
): Promise<BootstrapOutcome> {
  if (await users.adminExists(db)) return 'admin-exists';
  if (deps.admin === undefined) {
    deps.log.warn('no administrator exists and ADMIN_USERNAME/ADMIN_PASSWORD are not set; none was created');
    return 'no-credentials';
  }
  let username: string;
  try {
    username = validUsername(deps.admin.username);
    await validatePassword(deps.policy, deps.admin.password);
  } catch (error) {
    if (error instanceof AppError) throw new BootstrapError(`ADMIN credentials are invalid: ${error.detail}`);
    throw error;
  }
  const now = nowIso();
  const passwordHash = await deps.hasher.hash(deps.admin.password);
  try {
    await users.insertUser(db, { id: newId(), username, password_hash: passwordHash, is_admin: true, created_at: now, updated_at: now });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Another instance starting at the same moment may have just created it.
    if (await users.adminExists(db)) return 'admin-exists';
    throw new BootstrapError(`ADMIN_USERNAME "${username}" already belongs to a non-admin account; choose another name`);
  }
  deps.log.info({ username }, 'created the administrator account');
  return 'created';
}
