import { useEffect, useState } from 'preact/hooks';

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
      if (node.tagName === 'A' && node.getAttribute('href')) {
        const url = new URL(node.getAttribute('href')!, location.href);
        if (url.origin !== location.origin) {
          node.setAttribute('target', '_blank');
          node.setAttribute('rel', 'noopener noreferrer');
        }
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

export function Markdown({ source, label }: { source: string; label: string }) {
  const [html, setHtml] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loadRenderer().then((render) => live && setHtml(render(source)));
    return () => {
      live = false;
    };
  }, [source]);
  return (
    <section class="preview markdown" aria-label={label}>
      {html === null ? <p class="muted">Rendering…</p> : <div dangerouslySetInnerHTML={{ __html: html }} />}
    </section>
  );
}
