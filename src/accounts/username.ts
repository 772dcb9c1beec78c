import { Errors } from '../errors.js';

const USERNAME_RULE = /^[a-z0-9][a-z0-9._-]{1,30}[a-z0-9]$/;

export const USERNAME_RULE_MESSAGE =
  'Username must be 3 to 32 characters of a-z, 0-9, "_", "." or "-", and start and end with a letter or digit';

/** Spec §2.2: lower-cased before validation, storage and lookup. */
export function normalizeUsername(username: string): string {
  return username.toLowerCase();
}

export function isValidUsername(normalized: string): boolean {
  return USERNAME_RULE.test(normalized);
}

/** Normalizes and validates, throwing a 400 that states the rule. */
export function validUsername(username: string): string {
  const normalized = normalizeUsername(username);
  if (!isValidUsername(normalized)) throw Errors.validation(USERNAME_RULE_MESSAGE);
  return normalized;
}
