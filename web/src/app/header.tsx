import { logOut as endSession, type User } from './api';
import { confirmLeave } from './router';
import { AccountScreen, AdminScreens, preloadOn, TrashScreen } from './screens';
import { listDrafts } from '../notes/drafts';

export function Header({ user, path, onSignedOut }: { user: User; path: string; onSignedOut: () => void }) {
  const logOut = async () => {
    // Unsaved text: Cancel means stay, signed in, with the text.
    if (!confirmLeave()) return;
    // Text written offline in other notes, not yet on the server, goes with the logout.
    const kept = (await listDrafts(user.id)).length;
    if (
      kept > 0 &&
      !window.confirm(
        `${kept === 1 ? 'A note has' : `${kept} notes have`} text not yet saved to the server, kept on this device only. Logging out deletes it. Log out anyway?`,
      )
    )
      return;
    // Even if the server cannot be reached, the tokens in memory are dropped.
    await endSession();
    onSignedOut();
  };
  const link = (href: string, label: string, active: boolean, screen?: Parameters<typeof preloadOn>[0]) => (
    <a href={href} aria-current={active ? 'page' : undefined} {...(screen && preloadOn(screen))}>
      {label}
    </a>
  );
  return (
    <header class="top">
      <a class="brand" href="/">
        Vellum
      </a>
      <nav aria-label="Main">
        {link('/', 'Notes', path === '/' || path.startsWith('/notes'))}
        {link('/trash', 'Trash', path === '/trash', TrashScreen)}
        {link('/account', 'Account', path === '/account', AccountScreen)}
        {user.is_admin && link('/admin', 'Admin', path === '/admin' || path.startsWith('/admin/'), AdminScreens)}
      </nav>
      <span class="who" title="Signed in as">
        {user.username}
      </span>
      <button type="button" class="secondary" onClick={logOut}>
        Log out
      </button>
    </header>
  );
}
