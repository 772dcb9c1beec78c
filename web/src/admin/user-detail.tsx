import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';
import { navigate } from '../app/router';
import {
  type AdminUser,
  deleteUser,
  getAdminUser,
  passwordResetLink,
  removeSecondFactors,
  type User,
  updateUser,
} from './api';
import { flashNext } from './flash';
import { copyLink } from './invitations';
import { formatBytes } from './sizes';
import './admin.css';
import { confirmDisable, confirmRemoveAdmin } from './confirmations';

type Message = { ok: boolean; text: string } | null;
const MIB = 1048576;

/** One account as an administrator sees it, with what may be done to it (`/admin/users/{id}`). */
export function UserDetail({ id, me }: { id: string; me: User }) {
  const found = useResource((signal) => getAdminUser(id, signal), [id]);
  return (
    <div class="page account-detail">
      <p>
        <a href="/admin">← Administration</a>
      </p>
      <Loaded resource={found} what="the account">
        {(user) =>
          user === null ? (
            <>
              <h1>No such account</h1>
              <p role="status">This account does not exist, or was deleted.</p>
            </>
          ) : (
            <Detail initial={user} me={me} />
          )
        }
      </Loaded>
    </div>
  );
}

function Detail({ initial, me }: { initial: AdminUser; me: User }) {
  // Every change answers the account as it now is: shown as it comes, without reading it again.
  const [user, setUser] = useState(initial);
  const [message, setMessage] = useState<Message>(null);
  const [resetLink, setResetLink] = useState<{ url: string; expires_at: string } | null>(null);
  // One change at a time; buttons stay enabled so that the keyboard focus never falls off a disabled one.
  const busy = useRef(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const self = user.id === me.id;
  const name = `“${user.username}”`;

  useEffect(() => heading.current?.focus(), []);

  const act = async (work: () => Promise<string>) => {
    if (busy.current) return;
    busy.current = true;
    setMessage(null);
    try {
      setMessage({ ok: true, text: await work() });
    } catch (e) {
      // The server's own words (problem+json detail): "Cannot demote or disable the last administrator…".
      setMessage({ ok: false, text: errorMessage(e) });
    } finally {
      busy.current = false;
    }
  };
  const change = (patch: Parameters<typeof updateUser>[1], done: string) =>
    act(async () => {
      setUser(await updateUser(user.id, patch));
      return done;
    });

  const toggleDisabled = () => {
    if (user.disabled) return change({ disabled: false }, `${name} enabled: it can log in again.`);
    if (!confirmDisable(name, self)) return;
    return change({ disabled: true }, `${name} disabled: its sessions ended.`);
  };
  const toggleAdmin = () => {
    if (!user.is_admin) return change({ is_admin: true }, `${name} is now an administrator.`);
    if (!confirmRemoveAdmin(name, self)) return;
    return change({ is_admin: false }, `${name} is no longer an administrator.`);
  };
  const remove = () => {
    const warning = self ? ' This is your own account.' : '';
    if (!window.confirm(`Delete the account ${name} and all its notes, for good?${warning}`)) return;
    return act(async () => {
      await deleteUser(user.id);
      flashNext(`The account ${name} was deleted.`);
      navigate('/admin');
      return '';
    });
  };
  const removeFactors = () => {
    if (
      !window.confirm(
        `Remove every second factor of ${name} (authenticator app, recovery codes, passkeys)? Their password alone will sign them in.`,
      )
    )
      return;
    return act(async () => {
      await removeSecondFactors(user.id);
      setUser({ ...user, mfa: { totp: false, passkeys: 0 } });
      return `Second factors of ${name} removed.`;
    });
  };
  const makeResetLink = () =>
    act(async () => {
      setResetLink(await passwordResetLink(user.id));
      return 'Password reset link made: hand it over. Any earlier one stops working.';
    });

  const factors = [user.mfa.totp && 'authenticator app', user.mfa.passkeys > 0 && passkeys(user.mfa.passkeys)].filter(
    Boolean,
  );
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        {user.username}
        {self && ' (you)'}
      </h1>
      {message && message.text !== '' && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <section aria-labelledby="facts-heading">
        <h2 id="facts-heading">Account</h2>
        <dl class="facts">
          <dt>E-mail</dt>
          <dd>{user.email === null ? 'No verified address' : `${user.email} (verified)`}</dd>
          <dt>Role</dt>
          <dd>{user.is_admin ? 'Administrator' : 'Member'}</dd>
          <dt>Status</dt>
          <dd>{user.disabled ? 'Disabled: cannot log in' : 'Active'}</dd>
          <dt>Second factors</dt>
          <dd>{factors.length === 0 ? 'None' : factors.join(', ')}</dd>
          <dt>Last login</dt>
          <dd>{user.last_login_at === null ? 'Never' : formatTime(user.last_login_at)}</dd>
          <dt>Joined</dt>
          <dd>{user.created_at === null ? '—' : formatTime(user.created_at)}</dd>
          <dt>Storage</dt>
          <dd>
            {formatBytes(user.storage_used_bytes)} used of{' '}
            {user.storage_quota_bytes === null
              ? "the server's default quota"
              : user.storage_quota_bytes === 0
                ? 'unlimited storage'
                : formatBytes(user.storage_quota_bytes)}
          </dd>
        </dl>
      </section>
      <section aria-labelledby="access-heading">
        <h2 id="access-heading">Access</h2>
        <div class="actions">
          <button type="button" class="secondary" onClick={toggleDisabled}>
            {user.disabled ? 'Enable account' : 'Disable account'}
          </button>
          <button type="button" class="secondary" onClick={toggleAdmin}>
            {user.is_admin ? 'Remove administrator' : 'Make administrator'}
          </button>
          {factors.length > 0 && (
            <button type="button" class="secondary" onClick={removeFactors}>
              Remove second factors
            </button>
          )}
        </div>
      </section>
      <QuotaForm user={user} change={change} />
      <section aria-labelledby="reset-heading">
        <h2 id="reset-heading">Password reset</h2>
        <p class="hint">A single-use link, valid 30 minutes, where the person chooses a new password.</p>
        <div class="actions">
          <button type="button" class="secondary" onClick={makeResetLink}>
            Make a password reset link
          </button>
        </div>
        {resetLink !== null && (
          <p>
            <label for="reset-link">Password reset link (until {formatTime(resetLink.expires_at)})</label>
            <input id="reset-link" readOnly value={resetLink.url} onFocus={(e) => e.currentTarget.select()} />{' '}
            <button type="button" class="secondary" onClick={() => copyLink(resetLink.url, setMessage)}>
              Copy link
            </button>
          </p>
        )}
      </section>
      <section aria-labelledby="delete-heading" class="danger-zone">
        <h2 id="delete-heading">Delete</h2>
        <p class="hint">Deletes the account and every note in it, and ends its sessions.</p>
        <button type="button" class="danger" onClick={remove}>
          Delete account
        </button>
      </section>
    </>
  );
}

function QuotaForm({
  user,
  change,
}: {
  user: AdminUser;
  change: (patch: { storage_quota_bytes: number | null }, done: string) => Promise<void>;
}) {
  const [value, setValue] = useState(user.storage_quota_bytes === null ? '' : String(user.storage_quota_bytes / MIB));
  const [invalid, setInvalid] = useState(false);
  const name = `“${user.username}”`;
  const submit = (event: Event) => {
    event.preventDefault();
    const mib = Number(value);
    if (value.trim() === '' || !Number.isFinite(mib) || mib < 0) return setInvalid(true);
    setInvalid(false);
    const bytes = Math.round(mib * MIB);
    return change(
      { storage_quota_bytes: bytes },
      bytes === 0 ? `${name} may store any amount.` : `${name} may store ${formatBytes(bytes)}.`,
    );
  };
  return (
    <section aria-labelledby="quota-heading">
      <h2 id="quota-heading">Storage quota</h2>
      <form onSubmit={submit} noValidate>
        <label for="quota">Quota in MiB</label>
        <input
          id="quota"
          inputMode="decimal"
          value={value}
          aria-describedby="quota-hint"
          aria-invalid={invalid}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <p id="quota-hint" class={invalid ? 'error' : 'hint'}>
          {invalid
            ? 'Enter a number of MiB, 0 or more.'
            : "0 is unlimited. Without a quota of its own, the server's default applies."}
        </p>
        <div class="actions">
          <button type="submit" class="secondary">
            Set quota
          </button>
          {user.storage_quota_bytes !== null && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setValue('');
                void change({ storage_quota_bytes: null }, `${name} has the server's default quota again.`);
              }}
            >
              Use the default
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

function passkeys(count: number): string {
  return count === 1 ? '1 passkey' : `${count} passkeys`;
}
