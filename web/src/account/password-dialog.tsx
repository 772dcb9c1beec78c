import { startAuthentication, WebAuthnError } from '@simplewebauthn/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { ApiError, errorMessage } from '../api/client';
import { passkeyLoginOptions } from '../auth/api';
import { type Reauthentication, reauthenticationMethods } from './api';

/** The server's answer when a sensitive change came without the password, or with a wrong one. */
export function isReauthenticationRequired(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status === 401 &&
    (error.body as { code?: unknown } | null)?.code === 'reauthentication_required'
  );
}

/** What a form with its own password field says when the server refused the password asked again. */
export function passwordErrorMessage(error: unknown, typed: string): string {
  if (!isReauthenticationRequired(error)) return errorMessage(error);
  return typed === '' ? 'Enter your current password.' : 'That password is wrong. Try again.';
}

export interface PasswordRequest<T> {
  /** What is about to happen, as the dialog's title: "End the session on Phone?" */
  title: string;
  /** A sentence under the title, if the title alone does not say enough. */
  text?: string;
  /** The confirm button: "End session". */
  confirm: string;
  /**
   * The change itself, sent with the password (an account without one: a one-time code or a passkey
   * assertion); a wrong one keeps the dialog open.
   */
  run: (given: Reauthentication) => Promise<T>;
}

interface Pending {
  request: PasswordRequest<unknown>;
  resolve: (value: { done: true; value: unknown } | { done: false }) => void;
  reject: (error: unknown) => void;
}

/**
 * A sensitive change (ending sessions, passkeys) asks for the password again (the server answers
 * 401 reauthentication_required without it). `ask` opens a modal dialog with one password field
 * (an account without a password, GET /auth/me `has_password: false`: a one-time code field, and
 * "Use a passkey" when it has one);
 * the change runs with what is typed: a wrong password is said in the dialog, which stays open,
 * and any other failure closes it and is thrown to the caller. Resolves `{done: false}` when the
 * person cancels (the button or Esc). Render `dialog` once in the component.
 */
export function usePasswordDialog(): {
  dialog: JSX.Element | null;
  ask: <T>(request: PasswordRequest<T>) => Promise<{ done: true; value: T } | { done: false }>;
} {
  const [pending, setPending] = useState<Pending | null>(null);
  const ask = <T,>(request: PasswordRequest<T>) =>
    new Promise<{ done: true; value: T } | { done: false }>((resolve, reject) => {
      setPending({ request: request as PasswordRequest<unknown>, resolve: resolve as Pending['resolve'], reject });
    });
  const dialog = pending === null ? null : <PasswordDialog pending={pending} onClosed={() => setPending(null)} />;
  return { dialog, ask };
}

let counter = 0;

function PasswordDialog({ pending, onClosed }: { pending: Pending; onClosed: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [id] = useState(() => `password-dialog-${++counter}`);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Until GET /auth/me answers (or if it fails): the password field, as for most accounts.
  const [methods, setMethods] = useState<{ password: boolean; passkeys: boolean }>({ password: true, passkeys: false });
  const { request } = pending;
  const withCode = !methods.password;
  const noun = withCode ? 'code' : 'password';

  useEffect(() => {
    // Where focus goes back to: the button that opened the dialog.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.showModal();
    input.current?.focus();
    let live = true;
    reauthenticationMethods().then(
      (found) => {
        if (!live) return;
        setMethods(found);
        input.current?.focus();
      },
      () => {},
    );
    return () => {
      live = false;
      opener?.focus();
    };
  }, []);

  const close = (outcome: () => void) => {
    ref.current?.close();
    outcome();
    onClosed();
  };
  const cancel = () => close(() => pending.resolve({ done: false }));
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if ((withCode ? password.trim() : password) === '') {
      setError(withCode ? 'Enter a code from your authenticator app, or a recovery code.' : 'Enter your password.');
      input.current?.focus();
      return;
    }
    await send(withCode ? { code: password.trim() } : { password });
  };
  const withPasskey = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    let credential: unknown;
    try {
      const options = await passkeyLoginOptions();
      credential = await startAuthentication({
        optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
      });
    } catch (e) {
      setBusy(false);
      setError(
        e instanceof WebAuthnError || (e instanceof Error && e.name === 'NotAllowedError')
          ? 'The passkey was cancelled or timed out, or this device has no passkey for Vellum.'
          : errorMessage(e),
      );
      return;
    }
    await send({ credential });
  };
  const send = async (given: Reauthentication) => {
    setBusy(true);
    setError(null);
    try {
      const value = await request.run(given);
      close(() => pending.resolve({ done: true, value }));
    } catch (e) {
      setBusy(false);
      if (isReauthenticationRequired(e)) {
        setError(
          'credential' in given ? 'That passkey was not accepted. Try again.' : `That ${noun} is wrong. Try again.`,
        );
        setPassword('');
        input.current?.focus();
      } else if (e instanceof ApiError && e.status === 429) {
        setError(errorMessage(e));
      } else {
        close(() => pending.reject(e));
      }
    }
  };

  return (
    // Esc fires `cancel`: handled here, so the dialog's state and the caller's promise follow.
    <dialog
      ref={ref}
      class="password-dialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={request.text ? `${id}-text` : undefined}
      onCancel={(event) => {
        event.preventDefault();
        cancel();
      }}
    >
      <form onSubmit={submit}>
        <h2 id={`${id}-title`}>{request.title}</h2>
        {request.text && <p id={`${id}-text`}>{request.text}</p>}
        <label for={`${id}-password`}>{withCode ? 'One-time code' : 'Password'}</label>
        <input
          id={`${id}-password`}
          ref={input}
          {...(withCode
            ? { type: 'text' as const, autoComplete: 'one-time-code', spellcheck: false }
            : { type: 'password' as const, autoComplete: 'current-password' })}
          value={password}
          aria-invalid={error !== null}
          aria-describedby={error !== null ? `${id}-error` : `${id}-hint`}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {error === null ? (
          <p id={`${id}-hint`} class="hint">
            {withCode
              ? 'Your account has no password: confirm it is you with a code from your authenticator app, or a recovery code.'
              : 'To keep your account safe, confirm it is you.'}
          </p>
        ) : (
          <p id={`${id}-error`} class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {request.confirm}
          </button>
          {withCode && methods.passkeys && (
            <button type="button" class="secondary" disabled={busy} onClick={withPasskey}>
              Use a passkey
            </button>
          )}
          <button type="button" class="secondary" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
