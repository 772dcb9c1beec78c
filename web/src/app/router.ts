import { useEffect, useState } from 'preact/hooks';

/** A tiny History API router: the app's few routes do not need a library. */
type Guard = () => boolean;
let guard: Guard | null = null;
const listeners = new Set<() => void>();

/** The address the app shows, so that a refused Back can put it back. */
let shown = typeof location === 'undefined' ? '' : location.pathname + location.search;

/** While set, leaving the current screen asks first (unsaved text). */
export function setNavigationGuard(next: Guard | null): void {
  guard = next;
}

/**
 * Whether the current screen may be left: asks the guard (unsaved text), if any. A yes clears it,
 * so the navigation that follows (log out, say) does not ask twice.
 */
/** Whether leaving would ask (unsaved text on screen). */
export function hasLeaveGuard(): boolean {
  return guard !== null;
}

export function confirmLeave(): boolean {
  if (guard !== null && !guard()) return false;
  guard = null;
  return true;
}

function changed(): void {
  shown = location.pathname + location.search;
  for (const listener of listeners) listener();
}

/** `stay`: the screen is not left (the same note under a new address), so the guard is not asked. */
export function navigate(to: string, options: { replace?: boolean; stay?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.stay !== true && !confirmLeave()) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  changed();
}

// The browser's Back and Forward: the address has already changed, so a refusal puts it back
// (the screen never left it). One listener for the whole app, so the guard is asked once.
if (typeof window !== 'undefined') {
  window.addEventListener('popstate', () => {
    if (location.pathname + location.search === shown) return;
    if (!confirmLeave()) {
      history.pushState(null, '', shown);
      return;
    }
    changed();
  });
}

/** A part of the address, kept in step with navigation (the app's and the browser's Back). */
function useLocationPart(read: () => string): string {
  const [value, setValue] = useState(read);
  useEffect(() => {
    const update = () => setValue(read());
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return value;
}

export const usePath = (): string => useLocationPart(() => location.pathname);

/** The query string (`?folder=…`): the notes list's view. */
export const useSearch = (): string => useLocationPart(() => location.search);

/** Same-origin links that route without a page load (a modified click still opens a new tab). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (
    !anchor ||
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  // A link within the page ("Skip to content"): move the focus there, which the browser's own
  // jump does not do for every target.
  const href = anchor.getAttribute('href') ?? '';
  if (href.startsWith('#')) {
    const target = document.getElementById(decodeURIComponent(href.slice(1)));
    if (target !== null) {
      event.preventDefault();
      target.focus();
      target.scrollIntoView?.();
    }
    return;
  }
  if (
    anchor.target ||
    anchor.hasAttribute('download') ||
    anchor.origin !== location.origin ||
    anchor.dataset.external !== undefined
  )
    return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
