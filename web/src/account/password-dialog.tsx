import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { ApiError, errorMessage } from '../api/client';

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
  /** The change itself, sent with the password; a wrong password keeps the dialog open. */
  run: (password: string) => Promise<T>;
}

interface Pending {
  request: PasswordRequest<unknown>;
  resolve: (value: { done: true; value: unknown } | { done: false }) => void;
  reject: (error: unknown) => void;
}

/**
 * A sensitive change (ending sessions, passkeys) asks for the password again (the server answers
 * 401 reauthentication_required without it). `ask` opens a modal dialog with one password field;
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
  const { request } = pending;

  useEffect(() => {
    // Where focus goes back to: the button that opened the dialog.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.showModal();
    input.current?.focus();
    return () => opener?.focus();
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
    if (password === '') {
      setError('Enter your password.');
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const value = await request.run(password);
      close(() => pending.resolve({ done: true, value }));
    } catch (e) {
      setBusy(false);
      if (isReauthenticationRequired(e)) {
        setError('That password is wrong. Try again.');
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
        <label for={`${id}-password`}>Password</label>
        <input
          id={`${id}-password`}
          ref={input}
          type="password"
          autoComplete="current-password"
          value={password}
          aria-invalid={error !== null}
          aria-describedby={error !== null ? `${id}-error` : `${id}-hint`}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {error === null ? (
          <p id={`${id}-hint`} class="hint">
            To keep your account safe, confirm it is you.
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
          <button type="button" class="secondary" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
