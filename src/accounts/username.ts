import { Errors } from '../errors.js';

/** A stored username: what signup's rule leaves after lower-casing. */
const USERNAME_RULE = /^[a-z0-9][a-z0-9._-]{1,30}[a-z0-9]$/;

/**
 * Signup's username as the client sends it, before lower-casing (spec §2.2: lower-cased, then
 * checked), as the route schema's pattern. Exactly the strings whose toLowerCase() passes
 * USERNAME_RULE: ASCII letters of either case, and U+212A KELVIN SIGN, the one other character
 * that lower-cases into a-z ("k"; checked over every code point by the signup tests).
 */
export const SIGNUP_USERNAME_PATTERN = '^[A-Za-z0-9\\u212A][A-Za-z0-9\\u212A._-]{1,30}[A-Za-z0-9\\u212A]$';

export const USERNAME_RULE_PHRASE =
  'must be 3 to 32 characters of a-z, 0-9, "_", "." or "-", and start and end with a letter or digit';
export const USERNAME_RULE_MESSAGE = `Username ${USERNAME_RULE_PHRASE}`;

/** Spec §2.2: lower-cased before validation, storage and lookup. */
export function normalizeUsername(username: string): string {
  return username.toLowerCase();
}

export function isValidUsername(normalized: string): boolean {
  return USERNAME_RULE.test(normalized);
}

/**
 * The username a login attempt named, when it could be one, for the audit trail. Anything else is
 * dropped: people type their password into the username field, and the trail must not keep it.
 */
export function attemptedUsername(username: string): string | null {
  const normalized = normalizeUsername(username);
  return isValidUsername(normalized) ? normalized : null;
}

/** Normalizes and validates, throwing a 400 that states the rule (the bootstrap, the CLI; signup's schema says the same). */
export function validUsername(username: string): string {
  const normalized = normalizeUsername(username);
  if (!isValidUsername(normalized)) throw Errors.validation(USERNAME_RULE_MESSAGE);
  return normalized;
}
