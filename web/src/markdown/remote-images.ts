/**
 * Images from other sites. A note's Markdown can point at any image on the web, and loading one
 * tells its site who read the note and when, so the page loads none unless its reader asks, note by
 * note. The choice is kept on this device. The page's own CSP backs this up: its usual policy lets
 * no image from another origin load at all; the service relaxes it (img-src http: https:) only for a page
 * loaded with `?remote-images=on`, which the client asks for when a reader first allows a note's images.
 */

const KEY = 'vellum.remote-images';
/** Notes remembered; the oldest choices are forgotten first. */
const KEEP = 500;
const PARAM = 'remote-images';

/** Whether this page was loaded with the policy that lets images from other sites load (read once, at start). */
export const pageLoadsRemoteImages = new URLSearchParams(location.search).get(PARAM) === 'on';

function allowed(): string[] {
  try {
    const list: unknown = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return Array.isArray(list) ? list.filter((k): k is string => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether the reader allowed images from other sites in this note (`key`: a note id, or a shared link's token). */
export function remoteImagesAllowed(key: string): boolean {
  return allowed().includes(key);
}

/**
 * Remembers that `key`'s images from other sites may load; true when they can load on this page
 * at once, false when the page is reloaded for the policy that lets them (the caller does nothing more).
 */
export function allowRemoteImages(key: string): boolean {
  const list = allowed().filter((k) => k !== key);
  list.push(key);
  try {
    localStorage.setItem(KEY, JSON.stringify(list.slice(-KEEP)));
  } catch {
    // Storage full or off: the choice holds for this page only.
  }
  if (pageLoadsRemoteImages) return true;
  const url = new URL(location.href);
  url.searchParams.set(PARAM, 'on');
  location.assign(url.href);
  return false;
}
