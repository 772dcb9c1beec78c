import { useEffect, useState } from 'preact/hooks';
import { passwordEntropy } from './entropy';
import { checkPassword, passwordRules, type PasswordRulesRow } from './api';

/** The server's rules, asked once per page (GET /api/auth/password-rules: they come from its configuration). */
let asked: Promise<PasswordRulesRow> | undefined;
function serverRules(): Promise<PasswordRulesRow> {
  asked ??= passwordRules();
  asked.catch(() => {
    asked = undefined;
  }); // asked again next time
  return asked;
}

/** The rules as the user types (the estimate is the server's formula, entropy.ts); the server stays the judge. */
export function passwordChecks(password: string, rules: PasswordRulesRow) {
  const length = [...password].length;
  const bits = password === '' ? 0 : passwordEntropy(password);
  return {
    length,
    bits,
    longEnough: length >= rules.min_length && length <= rules.max_length,
    strongEnough: bits >= rules.min_entropy_bits,
  };
}

/** The breach check needs the server (the range API, or its list); asked once the typing pauses. */
const BREACH_PAUSE_MS = 300;

export function PasswordRules({ password, id }: { password: string; id: string }) {
  const [rules, setRules] = useState<PasswordRulesRow | null>(null);
  /** The server's breach verdict, and the password it is for (an older answer says nothing of the text now). */
  const [breach, setBreach] = useState<{ password: string; breached: boolean } | null>(null);
  useEffect(() => {
    void serverRules().then(setRules, () => undefined);
  }, []);
  useEffect(() => {
    if (rules === null || !passwordChecks(password, rules).longEnough) return;
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const answer = await checkPassword(password, controller.signal);
        setBreach({ password, breached: answer.breached });
      } catch {
        // Unanswered, the list says nothing; the server checks again when the form is sent.
      }
    }, BREACH_PAUSE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [password, rules]);
  if (rules === null) return <div id={id} class="rules" />;
  const c = passwordChecks(password, rules);
  const breached = breach !== null && breach.password === password ? breach.breached : null;
  // A breached password is weak whatever its estimate: the meter must never look strong for one.
  const strength =
    breached === true ? 0 : Math.min(100, Math.round((c.bits / Math.max(1, rules.min_entropy_bits * (5 / 3))) * 100));
  return (
    <div id={id} class="rules">
      <ul aria-live="polite">
        <li class={c.longEnough ? 'ok' : 'todo'}>
          <span aria-hidden="true">{c.longEnough ? '✓' : '•'}</span> At least {rules.min_length} characters ({c.length}{' '}
          so far)
        </li>
        <li class={c.strongEnough ? 'ok' : 'todo'}>
          <span aria-hidden="true">{c.strongEnough ? '✓' : '•'}</span> Hard to guess: mix words, cases, digits or
          symbols
          {password !== '' && ` (${c.strongEnough ? 'hard to guess' : 'too easy to guess'})`}
        </li>
        <li class={breached === false ? 'ok' : 'todo'}>
          <span aria-hidden="true">{breached === false ? '✓' : breached === true ? '✗' : '•'}</span> Not known from a
          data breach
          {breached === true && ' (this one is: choose another)'}
        </li>
      </ul>
      <meter min={0} max={100} low={40} high={60} optimum={100} value={strength} aria-label="Password strength" />
    </div>
  );
}
