import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import {
  addPasskey,
  confirmTotp,
  endOtherSessions,
  listPasskeys,
  newRecoveryCodes,
  passkeyRegistrationOptions,
  removePasskey,
  startTotp,
  turnOffTotp,
  type Mfa,
  type Passkey as PasskeyRow,
  type TotpSetup,
  reauthenticationMethods,
} from './api';
import { QrCode } from './qr-code';
import { formatTime } from '../app/format';
import { passkeyMessage } from '../auth/passkey';
import { passwordErrorMessage, usePasswordDialog } from './password-dialog';

type Message = { ok: boolean; text: string } | null;

function Flash({ message }: { message: Message }) {
  if (message === null) return null;
  return (
    <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
      {message.text}
    </p>
  );
}

/**
 * After a factor is added or removed, other devices stay signed in: offer to sign them out, as
 * the contract asks. This ends every session and starts a new one here.
 */
function EndOtherSessions() {
  const [done, setDone] = useState<Message>(null);
  const { dialog, ask } = usePasswordDialog();
  const end = async () => {
    try {
      const asked = await ask({
        title: 'Sign out everywhere else?',
        text: 'Every other device where you are signed in is signed out; this one stays signed in.',
        confirm: 'Sign out everywhere else',
        run: endOtherSessions,
      });
      if (!asked.done) return;
      setDone({ ok: true, text: 'Every other device is signed out.' });
    } catch (e) {
      setDone({ ok: false, text: errorMessage(e) });
    }
  };
  if (done?.ok) return <Flash message={done} />;
  return (
    <div class="offer">
      <p>Your other devices stay signed in.</p>
      <button type="button" class="secondary" onClick={end}>
        Sign out everywhere else
      </button>
      <Flash message={done} />
      {dialog}
    </div>
  );
}

/** The codes, once: copy, download, and a reminder that they are not shown again. */
function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState<Message>(null);
  const text = `Vellum recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied({ ok: true, text: 'Copied.' });
    } catch {
      setCopied({ ok: false, text: 'Copying is not allowed here; download the codes or write them down.' });
    }
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'vellum-recovery-codes.txt';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <div class="recovery-codes">
      <h3>Recovery codes</h3>
      <p>
        If you lose your phone, each of these codes signs you in once. Keep them somewhere safe: they are not shown
        again.
      </p>
      <ul aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" class="secondary" onClick={copy}>
          Copy codes
        </button>
        <button type="button" class="secondary" onClick={download}>
          Download codes
        </button>
      </div>
      <Flash message={copied} />
    </div>
  );
}

export function TwoStep({ mfa, onChange }: { mfa: Mfa; onChange: () => void }) {
  const [step, setStep] = useState<'idle' | 'password' | 'scan' | 'done' | 'manage'>('idle');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [message, setMessage] = useState<Message>(null);
  const [changed, setChanged] = useState(false);

  const run = async (work: () => Promise<void>) => {
    setMessage(null);
    try {
      await work();
    } catch (e) {
      setMessage({ ok: false, text: passwordErrorMessage(e, password) });
    }
  };
  const start = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      setSetup(await startTotp(password));
      setPassword('');
      setStep('scan');
    });
  };
  const confirm = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      setCodes(await confirmTotp(code.trim()));
      setCode('');
      setSetup(null);
      setStep('done');
      setChanged(true);
      onChange();
    });
  };
  const turnOff = () =>
    void run(async () => {
      await turnOffTotp(password, code.trim());
      setPassword('');
      setCode('');
      setCodes(null);
      setStep('idle');
      setChanged(true);
      setMessage({ ok: true, text: 'Two-step sign-in is off. Your password alone signs you in again.' });
      onChange();
    });
  const newCodes = () =>
    void run(async () => {
      setCodes(await newRecoveryCodes(password, code.trim()));
      setPassword('');
      setCode('');
      setStep('done');
    });

  return (
    <section aria-labelledby="two-step-heading">
      <h2 id="two-step-heading">Two-step sign-in</h2>
      <p>
        {mfa.totp
          ? 'On: signing in with your password also asks for a code from your authenticator app (or a recovery code).'
          : 'Off: your password alone signs you in. Add an authenticator app so that a stolen password is not enough.'}
      </p>
      {!mfa.totp && step === 'idle' && (
        <button
          type="button"
          onClick={() =>
            void run(async () => {
              // An account without a password (single sign-on) sets up its first factor right after
              // signing in without one; the server says when it must sign in again first.
              const methods = await reauthenticationMethods().catch(() => ({ password: true }));
              if (methods.password) return setStep('password');
              setSetup(await startTotp(''));
              setStep('scan');
            })
          }
        >
          Set up authenticator app
        </button>
      )}
      {step === 'password' && (
        <form onSubmit={start}>
          <label for="totp-password">Current password</label>
          <input
            id="totp-password"
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <div class="actions">
            <button type="submit">Continue</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setStep('idle');
                setPassword('');
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
      {step === 'scan' && setup && (
        <form onSubmit={confirm} class="totp-setup">
          <p>Scan this code with your authenticator app, or type the key below into it.</p>
          <QrCode text={setup.otpauth_url} label="QR code for your authenticator app" />
          <p>
            Key: <code class="secret">{setup.secret.match(/.{1,4}/g)!.join(' ')}</code>
          </p>
          <label for="totp-code">One-time code</label>
          <input
            id="totp-code"
            autoComplete="one-time-code"
            inputMode="numeric"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
            aria-describedby="totp-code-hint"
          />
          <p id="totp-code-hint" class="hint">
            The 6-digit code the app shows now.
          </p>
          <div class="actions">
            <button type="submit">Turn on</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setStep('idle');
                setSetup(null);
                setCode('');
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
      {step === 'done' && codes && <RecoveryCodes codes={codes} />}
      {mfa.totp && step !== 'manage' && (
        <div class="actions">
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setStep('manage');
              setCodes(null);
            }}
          >
            Manage two-step sign-in
          </button>
        </div>
      )}
      {mfa.totp && step === 'manage' && (
        <form onSubmit={(e) => e.preventDefault()}>
          <label for="manage-password">Current password</label>
          <input
            id="manage-password"
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <label for="manage-code">One-time code</label>
          <input
            id="manage-code"
            autoComplete="one-time-code"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
            aria-describedby="manage-code-hint"
          />
          <p id="manage-code-hint" class="hint">
            A code from your authenticator app, or a recovery code.
          </p>
          <div class="actions">
            <button type="button" class="secondary" onClick={newCodes}>
              New recovery codes
            </button>
            <button type="button" class="danger" onClick={turnOff}>
              Turn off two-step sign-in
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setStep('idle');
                setPassword('');
                setCode('');
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
      <Flash message={message} />
      {changed && <EndOtherSessions />}
    </section>
  );
}

export function Passkeys({ onChange }: { onChange: () => void }) {
  const [rows, setRows] = useState<PasskeyRow[] | null>(null);
  const [name, setName] = useState('');
  const [adding, setAdding] = useState(false);
  const [message, setMessage] = useState<Message>(null);
  const [changed, setChanged] = useState(false);
  const { dialog, ask } = usePasswordDialog();
  const load = async () => {
    try {
      setRows(await listPasskeys());
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  useEffect(() => void load(), []);

  const add = async (event: Event) => {
    event.preventDefault();
    setMessage(null);
    try {
      // The password first (a stolen session must not add a way in): the challenge it gets needs no other.
      const asked = await ask({
        title: 'Add a passkey?',
        text: 'Your device asks for your fingerprint, face or PIN next.',
        confirm: 'Continue',
        run: passkeyRegistrationOptions,
      });
      if (!asked.done) return;
      const options = asked.value;
      const credential = await startRegistration({
        optionsJSON: options as unknown as Parameters<typeof startRegistration>[0]['optionsJSON'],
      });
      const added = await addPasskey(name.trim() || 'Passkey', credential);
      setMessage({
        ok: true,
        text: `Passkey “${added.name}” added. You can sign in with it instead of your password.`,
      });
      setName('');
      setAdding(false);
      setChanged(true);
      onChange();
      await load();
    } catch (e) {
      setMessage({ ok: false, text: passkeyMessage(e, 'add it') });
    }
  };
  const remove = async (row: PasskeyRow) => {
    setMessage(null);
    try {
      const asked = await ask({
        title: `Remove the passkey “${row.name}”?`,
        text: 'It will no longer sign you in.',
        confirm: 'Remove passkey',
        run: (given) => removePasskey(row.id, given),
      });
      if (!asked.done) return;
      setMessage({ ok: true, text: `Passkey “${row.name}” removed.` });
      setChanged(true);
      onChange();
      await load();
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };

  return (
    <section aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      <p class="muted">
        Sign in with your fingerprint, face or device PIN instead of a password. Phishing sites cannot use them.
      </p>
      {rows === null ? (
        <p class="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="muted">No passkeys yet.</p>
      ) : (
        <ul class="rows table" aria-label="Your passkeys">
          {rows.map((row) => (
            <li key={row.id} aria-label={row.name}>
              <span class="row-title">{row.name}</span>
              <span class="meta">
                added {formatTime(row.created_at)} ·{' '}
                {row.last_used_at ? `last used ${formatTime(row.last_used_at)}` : 'never used'}
                {row.backed_up ? ' · synced' : ''}
              </span>
              <span class="actions">
                <button
                  type="button"
                  class="secondary"
                  onClick={() => remove(row)}
                  aria-label={`Remove passkey ${row.name}`}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {!browserSupportsWebAuthn() ? (
        <p class="muted">This browser cannot create passkeys.</p>
      ) : adding ? (
        <form onSubmit={add} class="inline">
          <label for="passkey-name">Passkey name</label>
          <input
            id="passkey-name"
            maxLength={100}
            placeholder="e.g. Work laptop"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <button type="submit">Create passkey</button>
          <button type="button" class="secondary" onClick={() => setAdding(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" onClick={() => setAdding(true)}>
          Add passkey
        </button>
      )}
      <Flash message={message} />
      {changed && <EndOtherSessions />}
      {dialog}
    </section>
  );
}
