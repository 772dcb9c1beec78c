import type DOMPurifyType from 'dompurify';
import type { Blocks } from './markdown-blocks';

const ATTACHMENT_PATH = /^\/api\/attachments\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

export interface Renderer {
  /** The text's blocks as HTML, parsed in a worker (or here, where workers cannot start). */
  blocks(source: string): Promise<Blocks>;
  /** Blocks' HTML made safe to show: for each block, an element holding it. */
  sanitize(blocks: string[]): HTMLElement[];
}

let renderer: Promise<Renderer> | null = null;

/** Loaded on first use (the list screen does not need it); a failed load may be tried again. */
export function loadRenderer(): Promise<Renderer> {
  renderer ??= import('dompurify')
    .then(({ default: DOMPurify }) => {
      configure(DOMPurify);
      // Set once: options passed with each call are parsed again each time (~0.5 ms a call).
      DOMPurify.setConfig(OPTIONS);
      const one = (html: string) => DOMPurify.sanitize(html) as unknown as DocumentFragment;
      return { blocks: parser(), sanitize: (blocks: string[]) => sanitizeTogether(blocks, one) };
    })
    .catch((error: unknown) => {
      renderer = null;
      throw error;
    });
  return renderer;
}

const OPTIONS = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'button', 'textarea', 'select'],
  // srcset: an image's other sources would escape the one-src check of images from other sites.
  FORBID_ATTR: ['style', 'srcset'],
  RETURN_DOM_FRAGMENT: true as const,
};

/**
 * Each sanitize call parses its input as a new document (~0.5 ms however short), so blocks are
 * sanitised together, each in a wrapper. Raw HTML in a note can leave a tag open or close one it
 * did not open and so move the wrappers' edges; then the blocks are sanitised one by one.
 */
function sanitizeTogether(blocks: string[], one: (html: string) => DocumentFragment): HTMLElement[] {
  const together = [...one(blocks.map((html) => `<div data-block="">${html}</div>`).join('')).childNodes];
  if (
    together.length === blocks.length &&
    together.every((node) => node instanceof HTMLDivElement && node.hasAttribute('data-block'))
  ) {
    return together as HTMLElement[];
  }
  return blocks.map((html) => {
    const element = document.createElement('div');
    element.append(one(html));
    return element;
  });
}

/**
 * The worker, one for the page, answering in order. Where it cannot start (or dies), the parser
 * is loaded into the page instead: slower on long texts, the same result.
 */
function parser(): (source: string) => Promise<Blocks> {
  let worker: Worker | null = null;
  try {
    worker = new Worker(new URL('./markdown.worker.ts', import.meta.url), { type: 'module' });
  } catch {
    worker = null;
  }
  const waiting = new Map<number, { resolve: (blocks: Blocks) => void; reject: (error: Error) => void }>();
  let next = 0;
  const inPage = () => import('./markdown-blocks').then(({ toBlocks }) => toBlocks);
  if (worker !== null) {
    worker.onmessage = ({ data }: MessageEvent<{ id: number; blocks?: Blocks; failed?: true }>) => {
      const request = waiting.get(data.id);
      waiting.delete(data.id);
      if (data.blocks !== undefined) request?.resolve(data.blocks);
      else request?.reject(new Error('The text could not be rendered.'));
    };
    worker.onerror = () => {
      worker = null;
      for (const request of waiting.values()) request.reject(new Error('The renderer stopped.'));
      waiting.clear();
    };
  }
  return (source) => {
    if (worker === null) return inPage().then(async (toBlocks) => toBlocks(source));
    const id = ++next;
    const sent = worker;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      sent.postMessage({ id, source });
    });
  };
}

/**
 * DOMPurify removes everything that could run (scripts, event handlers, javascript: URLs, forms,
 * frames). Links to other sites open in a new tab without access to this one; our own attachments
 * wait for the component to fetch them with the token.
 */
function configure(DOMPurify: typeof DOMPurifyType): void {
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    // GFM task lists are the one input kept: a checkbox that shows its state and cannot be changed.
    // Any other input (raw HTML in the note) is left inert and hidden. (Not removed in an
    // uponSanitizeElement hook: any such hook makes every sanitize call copy the allowlists.)
    if (node.tagName === 'INPUT') {
      const checkbox = node.getAttribute('type') === 'checkbox';
      const checked = node.hasAttribute('checked');
      for (const name of node.getAttributeNames()) node.removeAttribute(name);
      node.setAttribute('disabled', '');
      if (!checkbox) {
        node.setAttribute('hidden', '');
        return;
      }
      node.setAttribute('type', 'checkbox');
      if (checked) node.setAttribute('checked', '');
      // Its task is the list item's text; the box itself says whether it is done.
      node.setAttribute('aria-label', 'Done');
      return;
    }
    if (node.tagName === 'IMG') {
      // Only this hook says which image is an attachment or from another site: a note's own HTML cannot.
      node.removeAttribute('data-attachment');
      node.removeAttribute('data-remote');
    }
    const src = node.tagName === 'IMG' ? node.getAttribute('src') : null;
    if (src) {
      const url = resolve(src);
      const id = url !== null && url.origin === location.origin ? ATTACHMENT_PATH.exec(url.pathname)?.[1] : undefined;
      if (id !== undefined) {
        node.removeAttribute('src');
        node.setAttribute('data-attachment', id.toLowerCase());
      } else if (
        url !== null &&
        url.origin !== location.origin &&
        (url.protocol === 'https:' || url.protocol === 'http:')
      ) {
        // An image from another site loads only when the reader allows it for this note (remote-images.ts).
        node.removeAttribute('src');
        node.setAttribute('data-remote', url.href);
        node.setAttribute('title', `Image from ${url.host}, not loaded`);
      }
    }
    // Only this hook says which link is to an attachment: a note's own HTML cannot.
    if (node.tagName === 'A') node.removeAttribute('data-attachment-link');
    const href = node.tagName === 'A' ? node.getAttribute('href') : null;
    if (!href) return;
    const url = resolve(href);
    const linked = url !== null && url.origin === location.origin ? ATTACHMENT_PATH.exec(url.pathname)?.[1] : undefined;
    // A link no browser could follow (`http://[::1`) stays as its text.
    if (url === null) node.removeAttribute('href');
    // A file: the page fetches it (with the token, or the shared link's own route) when clicked.
    else if (linked !== undefined) node.setAttribute('data-attachment-link', linked.toLowerCase());
    else if (url.origin !== location.origin) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
}

/** `href` against this page, or null when it is no URL at all (new URL throws for those). */
function resolve(href: string): URL | null {
  try {
    return new URL(href, location.href);
  } catch {
    return null;
  }
}
