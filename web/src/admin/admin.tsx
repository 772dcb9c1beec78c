import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import {
  createUser,
  deleteUser,
  listAdminUsers,
  listAuthEvents,
  newSetupLink,
  removeSecondFactors,
  updateUser,
  type AdminUser,
  type AuthEvent,
  type User,
} from './api';
import { copyLink, Invitations } from './invitations';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';
import { takeFlash } from './flash';
import { formatBytes } from './sizes';
import { confirmDisable, confirmRemoveAdmin } from './confirmations';

const PAGE = 50;

export function AdminScreen({ me }: { me: User }) {
  const [page, setPage] = useState(0);
  const users = useResource((signal) => listAdminUsers(PAGE, page * PAGE, signal), [page]);
  const events = useResource((signal) => listAuthEvents(50, signal), []);
  const [error, setError] = useState('');
  const load = () => Promise.all([users.reload(), events.reload()]);
  const remove = async (user: User) => {
    if (!window.confirm(`Delete the account “${user.username}” and all its notes?`)) return;
    try {
      await deleteUser(user.id);
    } catch (e) {
      setError(errorMessage(e));
    }
    await load();
  };
  const [notice, setNotice] = useState(takeFlash);
  const removeFactors = async (user: User) => {
    if (
      !window.confirm(
        `Remove every second factor of “${user.username}” (authenticator app, recovery codes, passkeys)? Their password alone will sign them in.`,
      )
    )
      return;
    setNotice('');
    try {
      await removeSecondFactors(user.id);
      setNotice(`Second factors of “${user.username}” removed.`);
    } catch (e) {
      setError(errorMessage(e));
    }
    await load();
  };
  const [setupUrl, setSetupUrl] = useState<string | null>(null);
  const act = async (work: () => Promise<unknown>, done: string | (() => string)) => {
    setNotice('');
    setError('');
    try {
      await work();
      setNotice(typeof done === 'string' ? done : done());
    } catch (e) {
      setError(errorMessage(e));
    }
    await load();
  };
  const setQuota = (user: AdminUser) => {
    const answer = window.prompt(
      `Storage quota of “${user.username}” in MiB (0: unlimited; empty: the server's default)`,
      user.storage_quota_bytes === null ? '' : String(user.storage_quota_bytes / 1048576),
    );
    if (answer === null) return;
    const bytes = answer.trim() === '' ? null : Math.round(Number(answer) * 1048576);
    if (bytes !== null && !(bytes >= 0)) return setError('The quota must be a number of MiB, 0 or more.');
    void act(() => updateUser(user.id, { storage_quota_bytes: bytes }), `Quota of “${user.username}” changed.`);
  };
  const [newName, setNewName] = useState('');
  const [newAdmin, setNewAdmin] = useState(false);
  const [newEmail, setNewEmail] = useState('');
  const create = async (event: Event) => {
    event.preventDefault();
    const email = newEmail.trim();
    let done = 'Account created: hand over its set-up link.';
    await act(
      async () => {
        const created = await createUser({ username: newName, ...(email === '' ? {} : { email }), admin: newAdmin });
        setSetupUrl(created.setup_url);
        setNewName('');
        setNewEmail('');
        if (created.mailed) done = `Account created: its set-up link was mailed to ${email}.`;
        else if (email !== '') done = 'Account created. This server sends no mail: hand over its set-up link.';
      },
      () => done,
    );
  };
  const relink = (user: AdminUser) =>
    act(async () => setSetupUrl((await newSetupLink(user.id)).setup_url), `New set-up link for “${user.username}”.`);
  const say = (message: { ok: boolean; text: string } | null) =>
    message && (message.ok ? setNotice(message.text) : setError(message.text));
  return (
    <div class="page">
      <h1>Administration</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="flash" role="status">
          {notice}
        </p>
      )}
      {setupUrl !== null && (
        <p class="flash" role="status">
          Set-up link (single use, valid 7 days):{' '}
          <input
            aria-label="Set-up link"
            readOnly
            value={setupUrl}
            size={60}
            onFocus={(e) => e.currentTarget.select()}
          />{' '}
          <button type="button" class="secondary" onClick={() => copyLink(setupUrl, say)}>
            Copy link
          </button>
        </p>
      )}
      <Invitations />
      <section aria-labelledby="users-heading">
        <h2 id="users-heading">Users</h2>
        <form onSubmit={create} class="inline-form">
          <label for="new-username">New account's username</label>
          <input
            id="new-username"
            autoComplete="off"
            autoCapitalize="none"
            spellcheck={false}
            value={newName}
            onInput={(e) => setNewName(e.currentTarget.value)}
          />
          <label for="new-email">New account's e-mail (optional)</label>
          <input
            id="new-email"
            type="email"
            autoComplete="off"
            value={newEmail}
            onInput={(e) => setNewEmail(e.currentTarget.value)}
          />
          <label>
            <input type="checkbox" checked={newAdmin} onChange={(e) => setNewAdmin(e.currentTarget.checked)} /> As an
            administrator
          </label>
          <button type="submit">Create account</button>
        </form>
        <Loaded resource={users} what="the users">
          {(list: AdminUser[]) => (
            <ul class="rows table">
              {list.map((user) => (
                <li key={user.id} aria-label={user.username}>
                  <span class="row-title">
                    <a href={`/admin/users/${user.id}`}>{user.username}</a>
                    {user.is_admin && ' (admin)'}
                    {user.disabled && ' (disabled)'}
                    {user.id === me.id && ' (you)'}
                  </span>
                  <span class="meta">
                    joined {user.created_at ? formatTime(user.created_at) : '—'} · last login{' '}
                    {user.last_login_at ? formatTime(user.last_login_at) : 'never'} · second factor{' '}
                    {user.mfa.totp || user.mfa.passkeys > 0 ? 'yes' : 'no'} · {formatBytes(user.storage_used_bytes)}
                    {user.storage_quota_bytes !== null &&
                      ` of ${user.storage_quota_bytes === 0 ? 'unlimited' : formatBytes(user.storage_quota_bytes)}`}
                    {user.email && ` · ${user.email}`}
                  </span>
                  <span class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => {
                        // Disabling locks the person out: asked first, as on the account's own page.
                        if (!user.disabled && !confirmDisable(`“${user.username}”`, user.id === me.id)) return;
                        void act(
                          () => updateUser(user.id, { disabled: !user.disabled }),
                          `“${user.username}” ${user.disabled ? 'enabled' : 'disabled'}.`,
                        );
                      }}
                    >
                      {user.disabled ? 'Enable' : 'Disable'}
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => {
                        if (user.is_admin && !confirmRemoveAdmin(`“${user.username}”`, user.id === me.id)) return;
                        void act(
                          () => updateUser(user.id, { is_admin: !user.is_admin }),
                          `“${user.username}” ${user.is_admin ? 'is no longer' : 'is now'} an administrator.`,
                        );
                      }}
                    >
                      {user.is_admin ? 'Remove admin' : 'Make admin'}
                    </button>
                    <button type="button" class="secondary" onClick={() => setQuota(user)}>
                      Quota
                    </button>
                    <button type="button" class="secondary" onClick={() => relink(user)}>
                      Set-up link
                    </button>
                    <button type="button" class="secondary" onClick={() => removeFactors(user)}>
                      Remove second factors
                    </button>
                    <button type="button" class="danger" onClick={() => remove(user)}>
                      Delete
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Loaded>
        <div class="pager">
          <button type="button" class="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <button
            type="button"
            class="secondary"
            disabled={(users.data?.length ?? 0) < PAGE}
            onClick={() => setPage(page + 1)}
          >
            Next
          </button>
        </div>
      </section>
      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Audit events</h2>
        <Loaded resource={events} what="the audit events">
          {(list: AuthEvent[]) => (
            <div class="scroll" tabIndex={0} role="region" aria-label="Audit events table">
              <table class="events">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">User</th>
                    <th scope="col">Event</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">From</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((event) => (
                    <tr key={event.id}>
                      <td>
                        <time dateTime={event.created_at}>{formatTime(event.created_at)}</time>
                      </td>
                      <td>{event.username ?? '—'}</td>
                      <td>
                        {event.kind}
                        {event.detail && ` (${event.detail})`}
                      </td>
                      <td>{event.outcome}</td>
                      <td>{event.ip_address ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Loaded>
      </section>
    </div>
  );
}
