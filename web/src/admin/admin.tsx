import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { deleteUser, listAuthEvents, listUsers, removeSecondFactors, type AuthEvent, type User } from './api';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';

const PAGE = 50;

export function AdminScreen({ me }: { me: User }) {
  const [page, setPage] = useState(0);
  const users = useResource((signal) => listUsers(PAGE, page * PAGE, signal), [page]);
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
  const [notice, setNotice] = useState('');
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
      <section aria-labelledby="users-heading">
        <h2 id="users-heading">Users</h2>
        <Loaded resource={users} what="the users">
          {(list: User[]) => (
            <ul class="rows table">
              {list.map((user) => (
                <li key={user.id} aria-label={user.username}>
                  <span class="row-title">
                    {user.username}
                    {user.is_admin && ' (admin)'}
                    {user.id === me.id && ' (you)'}
                  </span>
                  <span class="meta">joined {user.created_at ? formatTime(user.created_at) : '—'}</span>
                  <span class="actions">
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
