import { useEffect, useState } from 'preact/hooks';

/** A tiny History API router: the app's few routes do not need a library. */
type Guard = () => boolean;
let guard: Guard | null = null;
const listeners = new Set<() => void>();

/** While set, leaving the current screen asks first (unsaved text). */
export function setNavigationGuard(next: Guard | null): void {
  guard = next;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (guard !== null && !guard()) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** Same-origin links that route without a page load (a modified click still opens a new tab). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (anchor.target || anchor.hasAttribute('download') || anchor.origin !== location.origin || anchor.dataset.external !== undefined) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
