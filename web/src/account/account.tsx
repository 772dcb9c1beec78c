import { useEffect, useRef, useState } from 'preact/hooks';
import { foldSections } from './fold-sections';
import { ApiError, errorMessage } from '../api/client';
import {
  changeEmail,
  changePassword,
  deleteAccount,
  exportFile,
  importFile as sendImport,
  listSessions,
  endSession,
  secondFactors,
  type Mfa,
  type SessionRow,
  type User,
} from './api';
import { Loaded, useResource } from '../api/resource';
import { PasswordRules } from '../auth/password-rules';
import { formatTime } from '../app/format';
import { logOutEverywhere } from '../app/api';
import { Passkeys, TwoStep } from './security';
import { autosave, liveEditing, openForReading } from '../app/device-settings';
import { deviceName } from './device-name';
import { usePasswordDialog } from './password-dialog';
import { Attachments } from '../files/files';
import { AccessTokens } from './access-tokens';

/** How the editor behaves on this device. */
function Editing() {
  const [saving, setSaving] = useState(autosave.on);
  const [reading, setReading] = useState(openForReading.on);
  const [live, setLive] = useState(liveEditing.on);
  return (
    <section aria-labelledby="editing-heading">
      <h2 id="editing-heading">Editing</h2>
      <label class="check">
        <input
          type="checkbox"
          checked={saving}
          onChange={(e) => {
            autosave.set(e.currentTarget.checked);
            setSaving(e.currentTarget.checked);
          }}
        />{' '}
        Save automatically a moment after I stop typing
      </label>
      <p class="muted">
        Turned off, notes are saved with Save or Ctrl+S (⌘S); unsaved text is still kept on the device.
      </p>
      <label class="check">
        <input
          type="checkbox"
          checked={reading}
          onChange={(e) => {
            openForReading.set(e.currentTarget.checked);
            setReading(e.currentTarget.checked);
          }}
        />{' '}
        Open notes for reading, with Edit to change them
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={live}
          onChange={(e) => {
            liveEditing.set(e.currentTarget.checked);
            setLive(e.currentTarget.checked);
          }}
        />{' '}
        Edit live with the others who have a note open, seeing their cursors
      </label>
      <p class="muted">These choices are kept on this device.</p>
    </section>
  );
}

export function AccountScreen({
  user,
  onSignedOut,
  onDeleted,
}: {
  user: User;
  onSignedOut: () => void;
  /** The account is deleted: signed out, and the login page says so. */
  onDeleted: () => void;
}) {
  const [mfa, setMfa] = useState<Mfa | null>(null);
  const loadMfa = async () => {
    try {
      setMfa(await secondFactors());
    } catch {
      setMfa(null);
    }
  };
  useEffect(() => void loadMfa(), []);
  const page = useRef<HTMLDivElement>(null);
  useEffect(() => foldSections(page.current!, window.matchMedia('(max-width: 720px)').matches), []);
  return (
    <div class="page account" ref={page}>
      <h1>Account</h1>
      <p>
        Signed in as <strong>{user.username}</strong>
        {user.is_admin && ' (administrator)'}.
      </p>
      <Editing />
      <EmailAddress current={user.email} />
      <ChangePassword />
      {mfa && <TwoStep mfa={mfa} onChange={loadMfa} />}
      <Passkeys onChange={loadMfa} />
      <Sessions onSignedOut={onSignedOut} />
      <AccessTokens />
      <Attachments />
      <ExportImport />
      <DeleteAccount onDeleted={onDeleted} />
    </div>
  );
}

/** The verified address password reset links go to; a new one counts once its mailed link is followed. */
function EmailAddress({ current }: { current: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [verified, setVerified] = useState(current);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await changeEmail(email.trim() === '' ? null : email, password);
      setPassword('');
      if ('username' in answer) {
        setVerified(null);
        setMessage({ ok: true, text: 'E-mail address removed.' });
      } else {
        setEmail('');
        setMessage(
          answer.sent
            ? {
                ok: true,
                text: `We sent a confirmation link to ${answer.email}; the address counts once you follow it.`,
              }
            : { ok: false, text: 'The confirmation mail could not be sent; try again later.' },
        );
      }
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  return (
    <section aria-labelledby="email-heading">
      <h2 id="email-heading">E-mail address</h2>
      <p class="muted">
        {verified === null
          ? 'No confirmed address: a forgotten password can only be reset by an administrator.'
          : `Confirmed: ${verified}. Password reset links go there.`}
      </p>
      <form onSubmit={submit}>
        <label for="email-address">E-mail address</label>
        <input
          id="email-address"
          type="email"
          autoComplete="email"
          value={email}
          aria-describedby="email-address-hint"
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <p id="email-address-hint" class="hint">
          Leave it empty to remove the confirmed address.
        </p>
        <label for="email-password">Password (to confirm it is you)</label>
        <input
          id="email-password"
          type="password"
          autoComplete="current-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {message && (
          <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <button type="submit">Save e-mail address</button>
      </form>
    </section>
  );
}

function ChangePassword() {
  const [old, setOld] = useState('');
  const [next, setNext] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await changePassword(old, next);
      setOld('');
      setNext('');
      setMessage({ ok: true, text: 'Password changed. Your other sessions were signed out.' });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  return (
    <section aria-labelledby="pw-heading">
      <h2 id="pw-heading">Change password</h2>
      <form onSubmit={submit}>
        <label for="old-password">Current password</label>
        <input
          id="old-password"
          type="password"
          autoComplete="current-password"
          value={old}
          onInput={(e) => setOld(e.currentTarget.value)}
        />
        <label for="new-password">New password</label>
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          value={next}
          aria-describedby="new-password-rules"
          onInput={(e) => setNext(e.currentTarget.value)}
        />
        <PasswordRules password={next} id="new-password-rules" />
        {message && (
          <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <button type="submit">Change password</button>
      </form>
    </section>
  );
}

function Sessions({ onSignedOut }: { onSignedOut: () => void }) {
  // This device first, then the others newest first.
  const sessions = useResource(async (signal) => {
    const all = await listSessions(signal);
    return [...all.filter((row) => row.current), ...all.filter((row) => !row.current)];
  }, []);
  const load = sessions.reload;
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const { dialog, ask } = usePasswordDialog();
  const revoke = async (row: SessionRow) => {
    try {
      const asked = await ask({
        title: `End the session on ${deviceName(row.user_agent)}?`,
        text: `Signed in since ${formatTime(row.created_at)}; it is signed out within 15 minutes at most.`,
        confirm: 'End session',
        run: (given) => endSession(row.id, given),
      });
      if (!asked.done) return;
      setMessage({
        ok: true,
        text: `Session ended: ${deviceName(row.user_agent)} is signed out within 15 minutes at most.`,
      });
    } catch (e) {
      setMessage({ ok: false, text: `Could not end the session: ${errorMessage(e)}` });
    }
    await load();
  };
  const everywhere = async () => {
    if (!window.confirm('Log out on every device where you are signed in, this one included?')) return;
    try {
      await logOutEverywhere();
      onSignedOut();
    } catch (e) {
      setMessage({ ok: false, text: `Could not log out everywhere: ${errorMessage(e)}` });
    }
  };
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p class="muted">Every device where you are logged in. Ending one signs it out within 15 minutes at most.</p>
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <Loaded resource={sessions} what="your sessions">
        {(rows: SessionRow[]) => (
          <ul class="rows table">
            {rows.map((row) => (
              <li key={row.id}>
                <span class="row-title" title={row.user_agent ?? undefined}>
                  {deviceName(row.user_agent)}
                </span>
                {row.current && <span class="badge">This device</span>}
                <span class="meta">
                  {row.ip_address ?? ''} · since {formatTime(row.created_at)} · last used {formatTime(row.last_used_at)}
                </span>
                {/* This device signs out with Log out; ending its session here would do so only 15 minutes later. */}
                {!row.current && (
                  <span class="actions">
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`End session: ${deviceName(row.user_agent)}, since ${formatTime(row.created_at)}`}
                      onClick={() => revoke(row)}
                    >
                      End session
                    </button>
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <div class="offer">
        <p class="muted">
          Log out in the header signs out this device only. To sign out on every device at once, this one included:
        </p>
        <button type="button" class="secondary" onClick={everywhere}>
          Log out everywhere
        </button>
      </div>
      {dialog}
    </section>
  );
}

async function download(format: 'json' | 'markdown' | 'archive', fallbackName: string): Promise<void> {
  const { name, blob } = await exportFile(format, fallbackName);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** "1 note", "2 notes" (or the given plural). */
function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

function ExportImport() {
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const run = async (work: () => Promise<string>) => {
    setMessage(null);
    try {
      setMessage({ ok: true, text: await work() });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  /** Notes of the chosen file that are here already (the same export imported before): the user says what to do. */
  const [existing, setExisting] = useState<number | null>(null);
  const send = (how: 'ask' | 'skip' | 'copy') => {
    if (!file) return;
    setExisting(null);
    void run(async () => {
      const name = file.name.toLowerCase();
      const type =
        name.endsWith('.zip') || file.type === 'application/zip'
          ? 'application/zip'
          : /\.(md|markdown)$/.test(name) || file.type === 'text/markdown'
            ? 'text/markdown'
            : 'application/json';
      const response = await sendImport(file, type, how);
      const body = response.body;
      if (response.status === 409 && body.code === 'import_existing' && body.existing !== undefined) {
        setExisting(body.existing);
        return '';
      }
      if (!response.ok) throw new Error(body.detail ?? `Import failed (${response.status})`);
      const skipped = body.skipped
        ? ` ${count(body.skipped, 'note was', 'notes were')} already here and left out.`
        : '';
      return `Imported ${count(body.notes ?? 0, 'note')} with ${count(body.versions ?? 0, 'version')}.${skipped}`;
    });
  };
  const importFile = (event: Event) => {
    event.preventDefault();
    send('ask');
  };
  return (
    <section aria-labelledby="data-heading">
      <h2 id="data-heading">Export and import</h2>
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() =>
            run(async () => {
              await download('json', 'vellum-export.json');
              return 'Export downloaded (JSON, with every version).';
            })
          }
        >
          Export JSON
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            run(async () => {
              await download('markdown', 'vellum-notes.zip');
              return 'Export downloaded (Markdown files in a zip).';
            })
          }
        >
          Export Markdown
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            run(async () => {
              await download('archive', 'vellum-archive.zip');
              return 'Archive downloaded (every note, version and file; import it to restore).';
            })
          }
        >
          Export archive
        </button>
      </div>
      <form class="inline" onSubmit={importFile}>
        <label for="import-file">Import a Vellum export (JSON, archive or Markdown zip) or a Markdown file</label>
        <input
          id="import-file"
          type="file"
          accept="application/json,.json,application/zip,.zip,text/markdown,.md,.markdown"
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
        <button type="submit" class="secondary" disabled={!file}>
          Import
        </button>
      </form>
      {existing !== null && (
        <div class="notice" role="group" aria-labelledby="import-existing">
          <p id="import-existing">
            {existing === 1
              ? '1 note in this file is already here'
              : `${existing.toLocaleString()} notes in this file are already here`}{' '}
            (the same title, times and versions: imported before). Nothing has been imported yet.
          </p>
          <div class="actions">
            <button type="button" onClick={() => send('skip')}>
              Skip {existing === 1 ? 'it' : 'them'}
            </button>
            <button type="button" class="secondary" onClick={() => send('copy')}>
              Import copies
            </button>
            <button type="button" class="secondary" onClick={() => setExisting(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {message && message.text !== '' && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
    </section>
  );
}

/**
 * Deleting the account (issue #42, item 10): what it deletes and an export to keep first are said
 * before anything is asked; the password is the last step and the only confirmation, so a wrong one
 * is said at once, in place, with nothing to confirm again; afterwards the login page says it is done.
 */
function DeleteAccount({ onDeleted }: { onDeleted: () => void }) {
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [exported, setExported] = useState('');
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (open) field.current?.focus();
  }, [open]);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError('');
    setBusy(true);
    try {
      await deleteAccount(password);
      onDeleted();
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 401
          ? password === ''
            ? 'Enter your password to delete the account.'
            : 'That password is wrong. Nothing was deleted; try again.'
          : errorMessage(e),
      );
      setBusy(false);
      field.current?.focus();
    }
  };
  const close = () => {
    setOpen(false);
    setPassword('');
    setError('');
  };
  return (
    <section aria-labelledby="delete-heading" class="danger-zone">
      <h2 id="delete-heading">Delete account</h2>
      <p>
        Deleting your account deletes every note in it, with their versions, files and shares, for good. It cannot be
        undone.
      </p>
      {!open ? (
        <button type="button" class="danger" onClick={() => setOpen(true)}>
          Delete account…
        </button>
      ) : (
        <form onSubmit={submit}>
          <p>
            Keep a copy first: the export has every note as a Markdown file, and imports into Vellum again.{' '}
            <button
              type="button"
              class="secondary"
              onClick={async () => {
                setExported('');
                try {
                  await download('markdown', 'vellum-notes.zip');
                  setExported('Export downloaded (Markdown files in a zip).');
                } catch (e) {
                  setExported(errorMessage(e));
                }
              }}
            >
              Download an export
            </button>
          </p>
          {exported && (
            <p class="flash" role="status">
              {exported}
            </p>
          )}
          <label for="delete-password">Confirm with your password</label>
          <input
            id="delete-password"
            ref={field}
            type="password"
            autoComplete="current-password"
            value={password}
            aria-invalid={error !== '' ? 'true' : undefined}
            aria-describedby={error !== '' ? 'delete-error' : undefined}
            onInput={(e) => {
              setPassword(e.currentTarget.value);
              setError('');
            }}
          />
          {error && (
            <p class="error" role="alert" id="delete-error">
              {error}
            </p>
          )}
          <div class="actions">
            <button type="submit" class="danger" disabled={busy}>
              Delete my account and notes for good
            </button>
            <button type="button" class="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
