import { randomBytes } from 'node:crypto';
import { isValidUsername } from '../accounts/username.js';

/**
 * A username for a new single sign-on account, from the provider's claim: lower-cased, characters
 * the rule refuses become "-", cut to 32, trimmed to start and end with a letter or digit. What is
 * left too short (or nothing at all) becomes "user-" and random hex.
 */
export function usernameFromClaim(value: unknown): string {
  const raw = typeof value === 'string' ? value : '';
  // An address names its person by what comes before the "@".
  const base = (raw.includes('@') ? raw.slice(0, raw.indexOf('@')) : raw)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .slice(0, 32)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return isValidUsername(base) ? base : `user-${randomBytes(4).toString('hex')}`;
}

/**
 * The names to try, in order, when the first is taken: "name-2" … "name-9", then "name-" and random
 * hex. A taken name means another person: the new account gets another name, never that account.
 */
export function* usernameCandidates(base: string): Generator<string> {
  yield base;
  for (let n = 2; n <= 9; n += 1) yield withSuffix(base, `-${n}`);
  for (let n = 0; n < 5; n += 1) yield withSuffix(base, `-${randomBytes(3).toString('hex')}`);
}

function withSuffix(base: string, suffix: string): string {
  return `${base.slice(0, 32 - suffix.length).replace(/[^a-z0-9]+$/, '')}${suffix}`;
}
