import { lazy } from './lazy';

// What a visit opens on (the login page, the notes, a shared note, a link from a mail) is in the
// first chunk; the other screens are chunks of their own, fetched when they are opened, or a moment
// earlier when the pointer rests on (or the keyboard reaches) the link or button that opens them.
export const AccountScreen = lazy(() => import('../account/account').then((m) => m.AccountScreen));
export const EnrolmentScreen = lazy(() => import('../account/enrolment').then((m) => m.EnrolmentScreen));
export const AdminScreens = lazy(() => import('../admin/screens').then((m) => m.AdminScreens));
export const HistoryScreen = lazy(() => import('../history/history').then((m) => m.HistoryScreen));
export const TrashScreen = lazy(() => import('../trash/trash').then((m) => m.TrashScreen));

/** Handlers for the element that opens a screen: its code starts on the way on hover or focus. */
export function preloadOn(screen: { preload(): Promise<unknown> }): {
  onPointerEnter: () => void;
  onFocus: () => void;
} {
  const start = () =>
    void screen.preload().catch(() => {
      /* the screen says so, with Try again, if it still cannot be fetched when opened */
    });
  return { onPointerEnter: start, onFocus: start };
}
