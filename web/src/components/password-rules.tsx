import { passwordEntropy } from '../../../src/passwords/entropy';

export const MIN_LENGTH = 15;
export const MAX_LENGTH = 256;
export const MIN_ENTROPY = 60;

/** The server's rules (CONTRACT.md "Input rules") as the user types; the server stays the judge. */
export function passwordChecks(password: string) {
  const length = [...password].length;
  const bits = password === '' ? 0 : passwordEntropy(password);
  return {
    length,
    bits,
    longEnough: length >= MIN_LENGTH && length <= MAX_LENGTH,
    strongEnough: bits >= MIN_ENTROPY,
  };
}

export function PasswordRules({ password, id }: { password: string; id: string }) {
  const c = passwordChecks(password);
  const strength = Math.min(100, Math.round((c.bits / 100) * 100));
  return (
    <div id={id} class="rules">
      <ul aria-live="polite">
        <li class={c.longEnough ? 'ok' : 'todo'}>
          <span aria-hidden="true">{c.longEnough ? '✓' : '•'}</span> At least {MIN_LENGTH} characters ({c.length} so far)
        </li>
        <li class={c.strongEnough ? 'ok' : 'todo'}>
          <span aria-hidden="true">{c.strongEnough ? '✓' : '•'}</span> Hard to guess: mix words, cases, digits or symbols
          {password !== '' && ` (${c.strongEnough ? 'strong' : 'weak'})`}
        </li>
        <li class="note">Must not be a password known from a data breach: the server checks that.</li>
      </ul>
      <meter min={0} max={100} low={40} high={60} optimum={100} value={strength} aria-label="Password strength" />
    </div>
  );
}
