import { useEffect, useRef, useState } from 'preact/hooks';
import { attachmentUrl } from '../api/upload';

const ATTACHMENT_PATH = /^\/api\/attachments\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

type Render = (markdown: string) => string;
let renderer: Promise<Render> | null = null;

/**
 * marked turns Markdown into HTML, DOMPurify removes everything that could run (scripts, event
 * handlers, javascript: URLs, forms, frames). Links to other sites open in a new tab without
 * access to this one. Loaded on first use: the list screen does not need them.
 */
function loadRenderer(): Promise<Render> {
  renderer ??= Promise.all([import('marked'), import('dompurify')]).then(([{ Marked }, { default: DOMPurify }]) => {
    const marked = new Marked({ gfm: true, breaks: false, async: false });
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      // Our own attachments load through fetch with the token (below); the <img> waits for them.
      const src = node.tagName === 'IMG' ? node.getAttribute('src') : null;
      if (src) {
        const url = resolve(src);
        const id = url !== null && url.origin === location.origin ? ATTACHMENT_PATH.exec(url.pathname)?.[1] : undefined;
        if (id !== undefined) {
          node.removeAttribute('src');
          node.setAttribute('data-attachment', id.toLowerCase());
        }
      }
      const href = node.tagName === 'A' ? node.getAttribute('href') : null;
      if (!href) return;
      const url = resolve(href);
      // A link no browser could follow (`http://[::1`) stays as its text.
      if (url === null) node.removeAttribute('href');
      else if (url.origin !== location.origin) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    return (markdown: string) =>
      DOMPurify.sanitize(marked.parse(markdown) as string, {
        USE_PROFILES: { html: true },
        FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'],
        FORBID_ATTR: ['style'],
      });
  });
  return renderer;
}

/** `href` against this page, or null when it is no URL at all (new URL throws for those). */
function resolve(href: string): URL | null {
  try {
    return new URL(href, location.href);
  } catch {
    return null;
  }
}

/** Texts at least this long render once typing pauses for PAUSE_MS, not on every keystroke. */
const LONG_TEXT = 20_000;
const PAUSE_MS = 400;

/**
 * `loadAttachment` turns an attachment id into a URL the page may show: by default the signed-in
 * user's (fetched with the access token); a shared page passes its link's own.
 */
export function Markdown({ source, label, loadAttachment = attachmentUrl }: { source: string; label: string; loadAttachment?: (id: string) => Promise<string> }) {
  const [html, setHtml] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const body = useRef<HTMLDivElement>(null);
  // Each rendered image of an attachment gets its object URL (or says it could not load).
  useEffect(() => {
    for (const img of body.current?.querySelectorAll<HTMLImageElement>('img[data-attachment]') ?? []) {
      loadAttachment(img.dataset.attachment!).then(
        (url) => { img.src = url; },
        () => { img.alt = `${img.alt || 'image'} (could not be loaded)`; img.classList.add('broken'); },
      );
    }
  }, [html]);
  useEffect(() => {
    let live = true;
    // Whatever the text holds, the preview ends: rendered, or saying it could not be. A long text
    // renders once typing pauses: rendering 300 KB took ~300 ms, and doing it on every keystroke
    // made 18 typed characters take 5.3 s to appear. Meanwhile the previous rendering stays.
    const render = () => loadRenderer().then((r) => r(source)).then(
      (rendered) => {
        if (!live) return;
        setHtml(rendered);
        setFailed(false);
      },
      () => live && setFailed(true),
    );
    const wait = html === null || source.length < LONG_TEXT ? 0 : PAUSE_MS;
    const timer = setTimeout(() => void render(), wait);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [source]);
  return (
    <section class="preview markdown" aria-label={label}>
      {failed ? <p class="muted" role="alert">This text could not be previewed.</p>
        : html === null ? <p class="muted">Rendering…</p> : <div ref={body} dangerouslySetInnerHTML={{ __html: html }} />}
    </section>
  );
}
