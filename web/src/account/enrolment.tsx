import { useEffect, useState } from 'preact/hooks';
import { enrolmentStatus, type Mfa } from './api';
import { Passkeys, TwoStep } from './security';

/**
 * REQUIRE_SECOND_FACTOR: this account must set up a second factor before anything else (GET
 * /auth/me said `mfa_enrolment_required`). Only these steps and Log out work until then; Continue
 * appears once a factor is confirmed, so the recovery codes stay on screen until read.
 */
export function EnrolmentScreen({ onDone, onSignOut }: { onDone: () => void; onSignOut: () => void }) {
  const [mfa, setMfa] = useState<Mfa | null>(null);
  const [required, setRequired] = useState(true);
  const load = async () => {
    const status = await enrolmentStatus();
    setMfa(status.mfa);
    setRequired(status.required);
  };
  useEffect(() => void load().catch(() => undefined), []);
  return (
    <main id="main" class="page account" tabIndex={-1}>
      <h1>Set up a second factor</h1>
      <p role="status">
        This server requires a second factor for your account: set up an authenticator app or a passkey before you go
        on.
      </p>
      {mfa && <TwoStep mfa={mfa} onChange={() => void load()} />}
      <Passkeys onChange={() => void load()} />
      <p>
        {!required && (
          <button type="button" onClick={onDone}>
            Continue
          </button>
        )}{' '}
        <button type="button" class="secondary" onClick={onSignOut}>
          Log out
        </button>
      </p>
    </main>
  );
}
