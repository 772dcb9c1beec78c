import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { attachmentUrl, saveFile } from '../files/api';
import { loadRenderer } from './markdown-render';
import { allowRemoteImages, pageLoadsRemoteImages, remoteImagesAllowed } from './remote-images';

/** What the page shows: the blocks' HTML and, in the same order, the element holding each. */
interface Shown {
  blocks: string[];
  nodes: HTMLElement[];
}

/** Work on the page's thread is cut into slices about this long, so typing is never held up longer. */
const SLICE_MS = 8;
/** Texts at least this long render once typing pauses for PAUSE_MS, not after every keystroke. */
const LONG_TEXT = 100_000;
const PAUSE_MS = 300;
/** Blocks sanitised in one call. */
const BATCH = 32;

/**
 * The Markdown rendered, following `source` as it changes, off the typing path: the text is parsed
 * in a worker, and only the blocks an edit changed are sanitised and replaced, a slice at a time
 * (in a 1 MB note a keystroke changes one paragraph, not 13,000). While a rendering runs, newer
 * text waits for it and the latest is rendered next; meanwhile the previous rendering stays.
 *
 * `loadAttachment` turns an attachment id into a URL the page may show: by default the signed-in
 * user's (fetched with the access token); a shared page passes its link's own.
 */
export function Markdown({
  source,
  label,
  loadAttachment = attachmentUrl,
  remoteKey,
  line,
  highlight,
  onTask,
  noteLinks = true,
}: {
  source: string;
  label: string;
  loadAttachment?: (id: string) => Promise<string>;
  /** The note (id, or a shared link's token) whose images from other sites its reader may allow; without it they never load. */
  remoteKey?: string;
  /** The line of the text (from 0, with a fraction) at the top of the editor beside: the preview scrolls to show it at its top. */
  line?: number | undefined;
  /** Words to mark wherever they occur (a search hit's), the first one scrolled into view. */
  highlight?: string[] | undefined;
  /**
   * Task boxes can be ticked: called with the box's place among the `shown` boxes and its new
   * state; false undoes the tick on screen (the text was not changed). Without it they only show.
   */
  onTask?: ((index: number, done: boolean, shown: number) => boolean) | undefined;
  /** `[[Title]]` links to the reader's own notes; false (a shared page's reader has none) shows their words only. */
  noteLinks?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLElement>(null);
  /** The line of the text where each shown block begins, as of the last complete rendering. */
  const lines = useRef<number[]>([]);
  const [state, setState] = useState<'rendering' | 'shown' | 'failed'>('rendering');
  /** Counts complete renderings (what depends on the rendered blocks runs again after each). */
  const [rendered, setRendered] = useState(0);
  /** Images from other sites: none in the text, held back until the reader allows them, or shown. */
  const [remote, setRemote] = useState<'none' | 'held' | 'shown'>('none');
  // The device's choice, read when the note changes (not on every keystroke's render).
  const allowedHere = useMemo(() => remoteKey !== undefined && remoteImagesAllowed(remoteKey), [remoteKey]);
  const remoteOn = useRef(false);
  remoteOn.current = allowedHere && pageLoadsRemoteImages;
  const wanted = useRef(source);
  wanted.current = source;
  const running = useRef(false);
  const mounted = useRef(true);
  const shown = useRef<Shown>({ blocks: [], nodes: [] });
  const load = useRef(loadAttachment);
  load.current = loadAttachment;
  const ticks = useRef(onTask);
  ticks.current = onTask;
  const interactive = onTask !== undefined;
  const linksOn = useRef(noteLinks);
  linksOn.current = noteLinks;

  const changedAt = useRef(0);

  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  useEffect(() => {
    changedAt.current = performance.now();
    // A rendering under way picks up the newest text when it ends.
    if (running.current) return;
    running.current = true;
    void (async () => {
      try {
        const renderer = await loadRenderer();
        let done: string | null = null;
        while (mounted.current && done !== wanted.current && host.current !== null) {
          // A long text renders once the typing pauses (after its first rendering, which shows at
          // once): each rendering lays the preview out again.
          const quiet =
            shown.current.blocks.length > 0 && wanted.current.length >= LONG_TEXT
              ? PAUSE_MS - (performance.now() - changedAt.current)
              : 0;
          if (quiet > 0) {
            await new Promise((resolve) => setTimeout(resolve, quiet));
            continue;
          }
          const text: string = wanted.current;
          const { html: blocks, lines: starts } = await renderer.blocks(text);
          if (!mounted.current || host.current === null) return;
          const complete = await patch(
            host.current,
            shown.current,
            blocks,
            renderer.sanitize,
            (element) => {
              if (!linksOn.current) unlinkNotes(element);
              showAttachments(element, load.current);
              if (remoteOn.current) showRemote(element);
            },
            () => !mounted.current || wanted.current !== text,
          );
          if (complete) {
            done = text;
            lines.current = starts;
            setState('shown');
            setRendered((n) => n + 1);
            setRemote(
              host.current.querySelector('img[data-remote]') === null ? 'none' : remoteOn.current ? 'shown' : 'held',
            );
          }
        }
      } catch {
        if (mounted.current) setState('failed');
      } finally {
        running.current = false;
      }
    })();
  }, [source]);

  // Following the editor: the block holding `line` goes to the top, as far into it as the line is.
  // Groups of blocks not yet drawn (content-visibility) have a guessed height until they are, so
  // the place is measured again on the next frames and the scroll corrected.
  useEffect(() => {
    const scroller = box.current;
    const nodes = shown.current.nodes;
    const starts = lines.current;
    if (line === undefined || scroller === null || nodes.length === 0 || starts.length !== nodes.length) return;
    let i = 0;
    while (i + 1 < starts.length && starts[i + 1]! <= line) i += 1;
    const lineSpan = i + 1 < starts.length ? starts[i + 1]! - starts[i]! : 1;
    const into = Math.min(1, Math.max(0, (line - starts[i]!) / lineSpan));
    const top = (node: HTMLElement) =>
      node.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop;
    const target = () => {
      const from = top(nodes[i]!);
      const next = nodes[i + 1];
      return from + (next === undefined ? 0 : top(next) - from) * into;
    };
    // A group that comes into view is drawn a frame or two after the scroll that shows it, so the
    // place is checked for a few frames whether or not it moved in between.
    let frame = 0;
    let tries = 0;
    const place = () => {
      const want = Math.round(target());
      if (Math.abs(scroller.scrollTop - want) > 1) scroller.scrollTop = want;
      if (++tries < 12) frame = requestAnimationFrame(place);
    };
    place();
    return () => cancelAnimationFrame(frame);
  }, [line, state]);

  // Task boxes take clicks only where the caller can change the text (the sanitiser disables them all).
  useEffect(() => {
    if (host.current !== null) setTaskBoxes(host.current, interactive);
  }, [rendered, interactive]);
  const tick = (event: Event) => {
    const box = event.target;
    const root = host.current;
    if (!(box instanceof HTMLInputElement) || box.type !== 'checkbox' || root === null || !root.contains(box)) return;
    const boxes = [...root.querySelectorAll('input[type="checkbox"]')];
    if (ticks.current?.(boxes.indexOf(box), box.checked, boxes.length) !== true) box.checked = !box.checked;
  };

  // A search hit's words, marked in the rendered text once it is shown (case-insensitive).
  const words = highlight?.join('\u0000') ?? '';
  useEffect(() => {
    const root = host.current;
    if (state !== 'shown' || root === null || words === '') return;
    const marks = markWords(root, words.split('\u0000'));
    marks[0]?.scrollIntoView({ block: 'center' });
    return () => {
      for (const mark of marks) mark.replaceWith(...mark.childNodes);
    };
  }, [rendered, words]);

  const showImages = () => {
    if (remoteKey === undefined || !allowRemoteImages(remoteKey) || host.current === null) return;
    remoteOn.current = true;
    showRemote(host.current);
    setRemote('shown');
  };

  // A link to an attachment: fetched as the images are (the token, or the shared link's route) and
  // saved under its link text, instead of sending the app to a URL the browser cannot open alone.
  const [fileError, setFileError] = useState('');
  const openFile = (event: MouseEvent) => {
    const link = (event.target as Element | null)?.closest?.('a[data-attachment-link]');
    if (!(link instanceof HTMLAnchorElement) || event.button !== 0) return;
    event.preventDefault();
    const name = link.textContent ?? '';
    setFileError('');
    load.current(link.dataset.attachmentLink!).then(
      (url) => saveFile(url, name),
      () => setFileError(`“${name}” could not be downloaded. Check your connection and try again.`),
    );
  };

  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the clicks handled are on links, which Enter clicks
    <section ref={box} class="preview markdown" aria-label={label} onClick={openFile} onChange={tick}>
      {fileError && (
        <p class="error" role="alert">
          {fileError}
        </p>
      )}
      {remote === 'held' && remoteKey !== undefined && (
        <p class="notice remote-images">
          {allowedHere
            ? 'You allowed images from other sites in this note.'
            : 'Images from other sites are not shown: loading them tells those sites that you read this note.'}{' '}
          <button type="button" class="secondary" onClick={showImages}>
            Show images from other sites
          </button>
        </p>
      )}
      {state === 'failed' && (
        <p class="muted" role="alert">
          This text could not be previewed.
        </p>
      )}
      {state === 'rendering' && <p class="muted">Rendering…</p>}
      {/* Filled by patch(), not by Preact. */}
      <div ref={host} class="md-blocks" />
    </section>
  );
}

/**
 * Makes `host` show `blocks`: what is equal at the start and the end stays; the blocks between are
 * replaced, sanitised a slice at a time. Stops early (false) once `stale()`; what it did so far is
 * recorded in `shown`, so the next call starts from what is on the page.
 */
async function patch(
  host: HTMLElement,
  shown: Shown,
  blocks: string[],
  sanitize: (blocks: string[]) => HTMLElement[],
  added: (element: HTMLElement) => void,
  stale: () => boolean,
): Promise<boolean> {
  const old = shown.blocks;
  let start = 0;
  while (start < old.length && start < blocks.length && old[start] === blocks[start]) start += 1;
  let end = 0;
  while (
    end < old.length - start &&
    end < blocks.length - start &&
    old[old.length - 1 - end] === blocks[blocks.length - 1 - end]
  )
    end += 1;
  for (const node of shown.nodes.slice(start, old.length - end)) {
    const group = node.parentElement;
    node.remove();
    if (group !== null && group !== host && group.childElementCount === 0) group.remove();
  }
  const head = { blocks: old.slice(0, start), nodes: shown.nodes.slice(0, start) };
  const tail = { blocks: old.slice(old.length - end), nodes: shown.nodes.slice(old.length - end) };
  const middle = blocks.slice(start, blocks.length - end);
  const made: HTMLElement[] = [];
  let placed = 0;
  // Built off the page and put in at once: inserted slice by slice, every slice cost a layout of
  // everything shown (a 1 MB note took over a minute to appear).
  const place = () => {
    insertGrouped(host, made.slice(placed), tail.nodes[0] ?? null);
    placed = made.length;
  };
  const settle = () => {
    place();
    for (const element of made) added(element);
    shown.blocks = [...head.blocks, ...middle.slice(0, made.length), ...tail.blocks];
    shown.nodes = [...head.nodes, ...made, ...tail.nodes];
  };
  let sliceStart = performance.now();
  for (let at = 0; at < middle.length; at += BATCH) {
    for (const element of sanitize(middle.slice(at, at + BATCH))) {
      element.className = 'md-block';
      made.push(element);
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      // The first slice goes in at once: the top of a long text shows while the rest is built.
      if (at < BATCH) place();
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (stale()) {
        settle();
        return false;
      }
      sliceStart = performance.now();
    }
  }
  settle();
  return true;
}

/**
 * Blocks live in groups of about GROUP, each skipped by layout and paint while off screen
 * (content-visibility): per block, the browser's bookkeeping of what is on screen cost more than
 * it saved (0.8 s in 2 s of typing in a 1 MB note); per group it is a hundredth of that.
 */
const GROUP = 64;

function newGroup(): HTMLElement {
  const group = document.createElement('div');
  group.className = 'md-group';
  return group;
}

/** Puts `elements` before `anchor` (a block already shown) or, without one, at the end. */
function insertGrouped(host: HTMLElement, elements: HTMLElement[], anchor: HTMLElement | null): void {
  if (elements.length === 0) return;
  const anchorGroup = anchor?.parentElement ?? null;
  if (anchor !== null && anchorGroup !== null && elements.length <= GROUP) {
    anchor.before(...elements);
    return;
  }
  let before: Element | null = null;
  if (anchor !== null && anchorGroup !== null) {
    // Many new blocks inside a group: the group is split at the anchor and new groups go between.
    const rest = newGroup();
    let node: ChildNode | null = anchor;
    while (node !== null) {
      const next: ChildNode | null = node.nextSibling;
      rest.append(node);
      node = next;
    }
    anchorGroup.after(rest);
    before = rest;
  } else {
    const last = host.lastElementChild as HTMLElement | null;
    const room = last === null ? 0 : Math.max(0, GROUP - last.childElementCount);
    last?.append(...elements.slice(0, room));
    elements = elements.slice(room);
  }
  for (let at = 0; at < elements.length; at += GROUP) {
    const group = newGroup();
    group.append(...elements.slice(at, at + GROUP));
    host.insertBefore(group, before);
  }
  if (anchorGroup !== null && anchorGroup.childElementCount === 0) anchorGroup.remove();
}

/**
 * Task boxes enabled or not. An enabled box is named by its task's words (a reader of the list
 * hears what ticking it does), not counting the sub-tasks under it.
 */
function setTaskBoxes(root: HTMLElement, enabled: boolean): void {
  for (const box of root.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')) {
    if (!enabled) {
      box.disabled = true;
      continue;
    }
    box.disabled = false;
    const item = box.closest('li');
    if (item === null) continue;
    const words = item.cloneNode(true) as HTMLElement;
    for (const nested of words.querySelectorAll('ul, ol')) nested.remove();
    const name = words.textContent?.replace(/\s+/g, ' ').trim();
    box.setAttribute('aria-label', name || 'Done');
  }
}

/** `[[Title]]` links shown as their words (where the reader has no notes to open). */
function unlinkNotes(element: HTMLElement): void {
  for (const link of element.querySelectorAll('a.wikilink')) {
    const words = document.createElement('span');
    words.className = 'wikilink';
    words.textContent = link.textContent;
    link.replaceWith(words);
  }
}

/** Images from other sites in `element` load (the reader allowed them for this note). */
function showRemote(element: HTMLElement): void {
  for (const img of element.querySelectorAll<HTMLImageElement>('img[data-remote]')) {
    img.src = img.dataset.remote!;
    img.removeAttribute('title');
  }
}

/** Each image of an attachment in `element` gets its object URL (or says it could not load). */
function showAttachments(element: HTMLElement, load: (id: string) => Promise<string>): void {
  for (const img of element.querySelectorAll<HTMLImageElement>('img[data-attachment]')) {
    load(img.dataset.attachment!).then(
      (url) => {
        img.src = url;
      },
      () => {
        img.alt = `${img.alt || 'image'} (could not be loaded)`;
        img.classList.add('broken');
      },
    );
  }
}

/** Wraps each occurrence of `words` in the text under `root` in <mark class="search-hit">; returns the marks. */
function markWords(root: HTMLElement, words: string[]): HTMLElement[] {
  const escaped = words.filter((w) => w !== '').map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (escaped.length === 0) return [];
  const pattern = new RegExp(escaped.join('|'), 'giu');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) texts.push(node as Text);
  const marks: HTMLElement[] = [];
  for (const text of texts) {
    const value = text.data;
    pattern.lastIndex = 0;
    if (!pattern.test(value)) continue;
    pattern.lastIndex = 0;
    const parts: Node[] = [];
    let at = 0;
    for (const match of value.matchAll(pattern)) {
      if (match[0] === '') continue;
      parts.push(document.createTextNode(value.slice(at, match.index)));
      const mark = document.createElement('mark');
      mark.className = 'search-hit';
      mark.textContent = match[0];
      marks.push(mark);
      parts.push(mark);
      at = match.index + match[0].length;
    }
    parts.push(document.createTextNode(value.slice(at)));
    text.replaceWith(...parts);
  }
  return marks;
}
