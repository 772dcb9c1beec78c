import { useEffect, useState } from 'preact/hooks';
import { onSignedOut } from '../api/client';
import { forgetSession, resumeSession, type User } from './api';
import { Header } from './header';
import { Shortcuts } from './shortcuts';
import { QuickSwitcher } from './quick-switcher';
import { navigate, usePath } from './router';
import { AccountScreen } from '../account/account';
import { AdminScreen } from '../admin/admin';
import { AuthScreen } from '../auth/auth';
import { HistoryScreen } from '../history/history';
import { NotesScreen } from '../notes/notes-screen';
import { TrashScreen } from '../trash/trash';
import { SharedPage } from '../sharing/shared-page';

type State = { status: 'loading' } | { status: 'out'; ended?: boolean } | { status: 'in'; user: User };

export function App() {
  const path = usePath();
  // A shared note is for anyone: no session is looked for, and none is used.
  const shared = /^\/s\/([^/]+)$/.exec(path);
  if (shared) return <SharedPage token={decodeURIComponent(shared[1]!)} />;
  return <SignedInApp path={path} />;
}

function SignedInApp({ path }: { path: string }) {
  const [state, setState] = useState<State>({ status: 'loading' });

  useEffect(() => {
    // Only a session that was in can end (a late 401 after Log out must not say so).
    onSignedOut(() => setState((now) => (now.status === 'in' ? { status: 'out', ended: true } : now)));
    // A reload keeps the user signed in through the refresh cookie (spec §5.9).
    (async () => {
      const user = await resumeSession();
      setState(user === null ? { status: 'out' } : { status: 'in', user });
    })();
  }, []);

  useEffect(() => {
    document.title = titleFor(path);
  }, [path]);

  if (state.status === 'loading')
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  if (state.status === 'out') {
    return (
      <AuthScreen
        mode={path === '/signup' ? 'signup' : 'login'}
        ended={state.ended === true}
        onSignedIn={(user) => {
          setState({ status: 'in', user });
          if (path === '/login' || path === '/signup') navigate('/', { replace: true });
        }}
      />
    );
  }

  const user = state.user;
  const signOut = () => {
    forgetSession();
    setState({ status: 'out' });
    navigate('/login', { replace: true });
  };
  const history = /^\/notes\/([^/]+)\/history$/.exec(path);
  const note = /^\/notes\/([^/]+)$/.exec(path);
  let screen;
  if (history) screen = <HistoryScreen noteId={history[1]!} />;
  else if (path === '/trash') screen = <TrashScreen />;
  else if (path === '/account') screen = <AccountScreen user={user} onSignedOut={signOut} />;
  else if (path === '/admin' && user.is_admin) screen = <AdminScreen me={user} />;
  else screen = <NotesScreen noteId={note ? note[1]! : null} me={user.id} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header user={user} path={path} onSignedOut={signOut} />
      <main id="main" tabIndex={-1}>
        {screen}
      </main>
      <Shortcuts />
      <QuickSwitcher />
    </>
  );
}

function titleFor(path: string): string {
  if (path.endsWith('/history')) return 'History · Vellum';
  if (path === '/trash') return 'Trash · Vellum';
  if (path === '/account') return 'Account · Vellum';
  if (path === '/admin') return 'Administration · Vellum';
  if (path === '/signup') return 'Sign up · Vellum';
  return 'Vellum';
}
