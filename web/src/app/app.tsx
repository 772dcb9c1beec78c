import { useEffect, useRef, useState } from 'preact/hooks';
import { mayHaveSession, onSignedOut } from '../api/client';
import {
  enrolmentRequired,
  forgetSession,
  type Me,
  pendingLogout,
  resumeSession,
  signedInAgain,
  type User,
} from './api';
import { Header } from './header';
import { AccountScreen, AdminScreens, EnrolmentScreen, HistoryScreen, TrashScreen } from './screens';
import { Shortcuts } from './shortcuts';
import { QuickSwitcher } from './quick-switcher';
import { navigate, usePath } from './router';
import { AuthScreen } from '../auth/auth';
import { NotesScreen } from '../notes/notes-screen';
import { loadCodeMirror } from '../notes/markdown-editor';
import { openForReading } from './device-settings';
import { SharedPage } from '../sharing/shared-page';
import { ConfirmEmailPage, ForgotPasswordPage, ResetPasswordPage } from '../auth/recovery';
import { isNetworkError, useConnection } from '../offline/connection';
import { ConnectionBanner, StorageFullNotice, UpdatePrompt } from '../offline/connection-state';
import { forgetDevice, lastAccountOnDevice, signedInOnDevice } from '../offline/device-copy';

type State =
  | { status: 'loading' }
  | { status: 'out'; ended?: boolean; loggedOut?: boolean; deleted?: boolean }
  | { status: 'in'; user: User; enrol?: boolean };

export function App() {
  const path = usePath();
  // A shared note is for anyone: no session is looked for, and none is used.
  const shared = /^\/s\/([^/]+)$/.exec(path);
  if (shared) return <SharedPage token={decodeURIComponent(shared[1]!)} />;
  // Links from mails (and an administrator) work signed in or not, on any device.
  const token = new URLSearchParams(location.search).get('token') ?? '';
  if (path === '/reset') return <ResetPasswordPage token={token} />;
  if (path === '/confirm-email') return <ConfirmEmailPage token={token} />;
  if (path === '/forgot-password') return <ForgotPasswordPage />;
  return (
    <>
      <UpdatePrompt />
      <SignedInApp path={path} />
    </>
  );
}

/**
 * Who is signed in on this reload: through the refresh cookie (spec §5.9), or, when the service
 * cannot be reached, the account signed in here last (its notes seen before are kept on this device).
 */
async function resume(): Promise<Me | User | null> {
  if (await pendingLogout()) return null;
  try {
    const user = await resumeSession();
    if (user !== null) await signedInOnDevice(user);
    return user;
  } catch (error) {
    if (!isNetworkError(error) || !mayHaveSession()) return null;
    return lastAccountOnDevice();
  }
}

function SignedInApp({ path }: { path: string }) {
  const [state, setState] = useState<State>({ status: 'loading' });

  useEffect(() => {
    // Only a session that was in can end (a late 401 after Log out must not say so).
    onSignedOut(() => setState((now) => (now.status === 'in' ? { status: 'out', ended: true } : now)));
    // A note opened by its link, to edit: the editor's code (the largest chunk) is fetched while the
    // session resumes and the note loads, not after them.
    if (mayHaveSession() && /^\/notes\/[^/]+$/.test(path) && !openForReading.on())
      void loadCodeMirror().catch(() => {
        /* the editor tries again when it mounts, and has its plain box meanwhile */
      });
    // A reload keeps the user signed in through the refresh cookie (spec §5.9).
    (async () => {
      const user = await resume();
      setState(
        user === null
          ? { status: 'out' }
          : { status: 'in', user, enrol: 'mfa_enrolment_required' in user && user.mfa_enrolment_required },
      );
    })();
  }, []);

  useEffect(() => {
    document.title = titleFor(path);
  }, [path]);

  // Logged out: nothing of the account stays on the device. After the screens are gone (an effect
  // runs after their unmounting), so that a draft written as the editor goes is cleared too.
  const loggedOut = state.status === 'out' && state.loggedOut === true;
  useEffect(() => {
    if (loggedOut) void forgetDevice();
  }, [loggedOut]);

  if (state.status === 'loading')
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  if (state.status === 'out') {
    return (
      <AuthScreen
        mode={path === '/signup' ? 'signup' : path === '/setup' ? 'setup' : 'login'}
        ended={state.ended === true}
        deleted={state.deleted === true}
        onSignedIn={async (user) => {
          // What another account left on this device goes before anything of this one shows.
          signedInAgain();
          await signedInOnDevice(user);
          // REQUIRE_SECOND_FACTOR may send this account to enrolment first (GET /auth/me says so).
          // The notes are asked for beside that question, not after it: one round trip less before
          // the list. Such an account's notes are refused by the server meanwhile, and its
          // enrolment replaces them as soon as the answer comes (it is asked first, so usually first).
          const enrol = enrolmentRequired();
          setState({ status: 'in', user });
          if (path === '/login' || path === '/signup' || path === '/setup') navigate('/', { replace: true });
          if (await enrol)
            setState((now) => (now.status === 'in' && now.user === user ? { ...now, enrol: true } : now));
        }}
      />
    );
  }

  const user = state.user;
  const signOut = () => {
    forgetSession();
    setState({ status: 'out', loggedOut: true });
    navigate('/login', { replace: true });
  };
  const accountDeleted = () => {
    forgetSession();
    setState({ status: 'out', loggedOut: true, deleted: true });
    navigate('/login', { replace: true });
  };
  if (state.enrol === true)
    return <EnrolmentScreen onDone={() => setState({ status: 'in', user })} onSignOut={signOut} />;
  const history = /^\/notes\/([^/]+)\/history$/.exec(path);
  const note = /^\/notes\/([^/]+)$/.exec(path);
  let screen;
  if (history) screen = <HistoryScreen noteId={history[1]!} />;
  else if (path === '/trash') screen = <TrashScreen />;
  else if (path === '/account') screen = <AccountScreen user={user} onSignedOut={signOut} onDeleted={accountDeleted} />;
  else if ((path === '/admin' || path.startsWith('/admin/')) && user.is_admin)
    screen = <AdminScreens me={user} path={path} />;
  else screen = <NotesScreen noteId={note ? note[1]! : null} me={user.id} myName={user.username} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header user={user} path={path} onSignedOut={signOut} />
      <ConnectionBanner />
      <StorageFullNotice />
      <KeptDraftsSaver me={user.id} open={note ? note[1]! : null} />
      <main id="main" tabIndex={-1}>
        {screen}
      </main>
      <Shortcuts />
      <QuickSwitcher />
    </>
  );
}

/** When the connection comes back, what was written offline in notes not open is saved by itself. */
function KeptDraftsSaver({ me, open }: { me: string; open: string | null }) {
  const { wakes } = useConnection();
  const latest = useRef(open);
  latest.current = open;
  useEffect(() => {
    // Its code is fetched then: only a connection that came back needs it.
    if (wakes > 0) void import('../offline/sync').then(({ saveKeptDrafts }) => saveKeptDrafts(me, latest.current));
  }, [wakes, me]);
  return null;
}

function titleFor(path: string): string {
  if (path.endsWith('/history')) return 'History · Vellum';
  if (path === '/trash') return 'Trash · Vellum';
  if (path === '/account') return 'Account · Vellum';
  if (path === '/admin' || path.startsWith('/admin/')) return 'Administration · Vellum';
  if (path === '/signup') return 'Sign up · Vellum';
  if (path === '/setup') return 'Choose your password · Vellum';
  if (path === '/reset') return 'New password · Vellum';
  return 'Vellum';
}
