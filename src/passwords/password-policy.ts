import { Errors } from '../errors.js';
import type { Config } from '../config.js';
import { createBreachChecker, type BreachChecker, type BreachCheckOptions } from './breach-check.js';
import { passwordEntropy } from './entropy.js';

export const PASSWORD_MAX_LENGTH = 256;

export interface PasswordPolicy {
  minLength: number;
  minEntropy: number;
  breaches: BreachChecker;
}

/** The length rule's words after "Password" (signup's schema says them too). */
export const passwordTooShort = (minLength: number) =>
  `must be at least ${minLength} characters long; a few unrelated words make a strong one`;
export const PASSWORD_TOO_LONG = `must be at most ${PASSWORD_MAX_LENGTH} characters long`;

/** Length in code points, so every script and emoji counts as the user sees it. */
export function passwordLength(password: string): number {
  let n = 0;
  for (const _ of password) n++;
  return n;
}

/** Length, then the breach check, then entropy (docs/api.md, "Input rules"); each failure is a 400. */
export async function validatePassword(policy: PasswordPolicy, password: string): Promise<void> {
  const length = passwordLength(password);
  if (length < policy.minLength) {
    throw Errors.validation(`Password ${passwordTooShort(policy.minLength)}`);
  }
  if (length > PASSWORD_MAX_LENGTH) {
    throw Errors.validation(`Password ${PASSWORD_TOO_LONG}`);
  }
  if ((await policy.breaches.check(password)) === 'breached') {
    throw Errors.validation('This password appears in known data breaches; choose a different one');
  }
  if (passwordEntropy(password) < policy.minEntropy) {
    throw Errors.validation(
      'Password is too easy to guess: make it longer, avoid repeats and sequences like "1234" or "qwerty", or mix in other kinds of characters',
    );
  }
}

export function policyFromConfig(
  config: Pick<Config, 'passwordMinLength' | 'passwordMinEntropy' | 'pwnedPasswordsUrl'>,
  log: BreachCheckOptions['log'],
): PasswordPolicy {
  return {
    minLength: config.passwordMinLength,
    minEntropy: config.passwordMinEntropy,
    breaches: createBreachChecker({ baseUrl: config.pwnedPasswordsUrl, log }),
  };
}
