import { useEffect } from 'preact/hooks';
import { setNavigationGuard } from '../app/router';

/**
 * Leaving with unsaved text asks first, in the app and when closing or reloading the tab.
 * `onLeave` runs when the user chose, in the app, to leave without saving.
 */
export function useLeaveGuard(dirty: boolean, onLeave: () => void): void {
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    setNavigationGuard(() => {
      const leave = window.confirm('This note has unsaved changes. Leave without saving?');
      if (leave) onLeave();
      return leave;
    });
    return () => {
      window.removeEventListener('beforeunload', warn);
      setNavigationGuard(null);
    };
  }, [dirty]);
}

/** Nothing left to guard (the note was deleted): leaving asks nothing. */
export function dropLeaveGuard(): void {
  setNavigationGuard(null);
}
