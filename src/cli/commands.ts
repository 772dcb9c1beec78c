import type { FastifyBaseLogger } from 'fastify';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { validatePassword, type PasswordPolicy } from '../passwords/password-policy.js';
import { pruneRefreshTokens, revokeAllForUser } from '../sessions/refresh-token.repository.js';
import * as users from '../accounts/user.repository.js';
import { normalizeUsername, validUsername } from '../accounts/username.js';
import type { Db } from '../db/schema.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { AppError } from '../errors.js';
import { newId } from '../shared/ids.js';

/** An operator mistake: printed without a stack trace, exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError';
}

export interface CommandDeps {
  db: Db;
  policy: PasswordPolicy;
  hasher: PasswordHasher;
  log: FastifyBaseLogger;
}

async function checkedPassword(policy: PasswordPolicy, password: string): Promise<void> {
  try {
    await validatePassword(policy, password);
  } catch (error) {
    if (error instanceof AppError) throw new CommandError(error.detail);
    throw error;
  }
}

export async function createAdmin(deps: CommandDeps, username: string, password: string): Promise<string> {
  let normalized: string;
  try {
    normalized = validUsername(username);
  } catch (error) {
    if (error instanceof AppError) throw new CommandError(error.detail);
    throw error;
  }
  await checkedPassword(deps.policy, password);
  const now = nowIso();
  try {
    await users.insertUser(deps.db, {
      id: newId(), username: normalized, password_hash: await deps.hasher.hash(password), is_admin: true, created_at: now, updated_at: now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new CommandError(`user "${normalized}" already exists`);
    throw error;
  }
  return normalized;
}

/** Sets a new password and ends every session of the user, as a password change does. */
export async function resetPassword(deps: CommandDeps, username: string, password: string): Promise<void> {
  const row = await users.findUserByUsername(deps.db, normalizeUsername(username));
  if (row === undefined) throw new CommandError(`no user "${normalizeUsername(username)}"`);
  await checkedPassword(deps.policy, password);
  const passwordHash = await deps.hasher.hash(password);
  const now = nowIso();
  await deps.db.transaction().execute(async (trx) => {
    await users.updatePasswordHash(trx, row.id, passwordHash, now);
    await revokeAllForUser(trx, row.id, now);
  });
}

export function pruneSessions(deps: Pick<CommandDeps, 'db'>): Promise<number> {
  return pruneRefreshTokens(deps.db, nowIso());
}
