import * as accounts from '../accounts/accounts.service.js';
import { normalizeUsername } from '../accounts/username.js';
import { nowIso } from '../db/values.js';
import { AppError } from '../errors.js';
import { pruneRefreshTokens } from '../sessions/refresh-token.repository.js';

/** An operator mistake: printed without a stack trace, exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError';
}

/** What the commands need: the account functions' services; of sessions, only ending them (reset-password). */
export type CommandDeps = accounts.AccountStore & { sessions: Pick<accounts.AccountSessions, 'endAll'> };

/** The service's refusals (a bad username or password, a taken name) as an operator's message. */
async function asCommand<T>(work: () => Promise<T>, taken?: () => string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new CommandError(error.code === 'username_taken' && taken !== undefined ? taken() : error.detail);
  }
}

/** Through the accounts service, as signup and the start-up bootstrap: same checks, audited. */
export async function createAdmin(deps: CommandDeps, username: string, password: string): Promise<string> {
  const created = await asCommand(
    () => accounts.createAdmin(deps, username, password, 'the vellum CLI'),
    () => `user "${normalizeUsername(username)}" already exists`,
  );
  return created.username;
}

/** Sets a new password and ends every session of the user, as a password change does. */
export async function resetPassword(deps: CommandDeps, username: string, password: string): Promise<void> {
  const reset = await asCommand(() => accounts.resetPassword(deps, username, password));
  if (reset === undefined) throw new CommandError(`no user "${normalizeUsername(username)}"`);
}

export function pruneSessions(deps: Pick<CommandDeps, 'db'>): Promise<number> {
  return pruneRefreshTokens(deps.db, nowIso());
}
