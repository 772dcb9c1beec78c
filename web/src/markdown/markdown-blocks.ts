import { Marked, type TokenizerAndRendererExtension, type TokensList } from 'marked';

const OPTIONS = { gfm: true, breaks: false, async: false } as const;

/**
 * `[[Title]]`, `[[Title|shown words]]` and `[[Title#Heading]]`, as Obsidian vaults write them: a
 * link to the note of that title. Notes are found by title only when it is followed
 * (`/notes/find?title=…`, which says so when there is none and offers to create it), so rendering
 * asks the server nothing. Inside code spans and blocks it stays text (those are tokenized first).
 */
const WIKILINK = /^\[\[([^[\]|#\n]+)(?:#([^[\]|\n]*))?(?:\|([^[\]\n]+))?\]\]/;
const wikilinks: TokenizerAndRendererExtension = {
  name: 'wikilink',
  level: 'inline',
  start: (source) => {
    const at = source.indexOf('[[');
    return at < 0 ? undefined : at;
  },
  tokenizer(source) {
    const match = WIKILINK.exec(source);
    const title = match?.[1]?.trim();
    if (match === null || !title) return undefined;
    return { type: 'wikilink', raw: match[0], title, text: match[3]?.trim() || title };
  },
  renderer: (token) =>
    `<a class="wikilink" href="/notes/find?title=${encodeURIComponent(token.title as string)}">${escapeHtml(token.text as string)}</a>`,
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const plain = new Marked(OPTIONS, { extensions: [wikilinks] });
let highlighting: Promise<Marked> | null = null;

/** A fenced code block (``` or ~~~) naming its language: only then is the highlighter loaded. */
const FENCE_WITH_LANGUAGE = /^ {0,3}(?:`{3,}|~{3,})[ \t]*[\w+#.-]/m;

/**
 * highlight.js (its common languages, ~40 kB gzipped) arrives on first need, in its own chunk:
 * most notes have no code. A language it does not know stays plain, escaped by marked.
 */
function withHighlighting(): Promise<Marked> {
  highlighting ??= Promise.all([import('highlight.js/lib/common'), import('marked-highlight')])
    .then(
      ([{ default: hljs }, { markedHighlight }]) =>
        new Marked(
          OPTIONS,
          { extensions: [wikilinks] },
          markedHighlight({
            langPrefix: 'hljs language-',
            highlight: (code, language) =>
              hljs.getLanguage(language) ? hljs.highlight(code, { language, ignoreIllegals: true }).value : code,
          }),
        ),
    )
    .catch((error: unknown) => {
      highlighting = null;
      throw error;
    });
  return highlighting;
}

/** A text's blocks as HTML, and the line (from 0) of the text where each begins. */
export interface Blocks {
  html: string[];
  lines: number[];
}

/**
 * Markdown as HTML, one string per top-level block (heading, paragraph, list, table, code…), so the
 * page can replace only the blocks an edit changed. Each block is parsed with the whole text's
 * link definitions, so `[x][ref]` still finds a `[ref]: url` elsewhere. Not yet sanitised. Each
 * block's first line lets a preview follow the editor's scrolling.
 */
export async function toBlocks(source: string): Promise<Blocks> {
  const marked = FENCE_WITH_LANGUAGE.test(source) ? await withHighlighting().catch(() => plain) : plain;
  const tokens = marked.lexer(source);
  // parse() runs the extensions' token walkers (the highlighter's); lexer() and parser() do not.
  const walk = marked.defaults.walkTokens;
  if (walk) marked.walkTokens(tokens, walk);
  const html: string[] = [];
  const lines: number[] = [];
  // Where each token's text is, found in order: the lexer reads \r\n as \n and keeps link
  // definitions out of the tokens, so adding up their lengths would drift.
  const text = source.replace(/\r\n?/g, '\n');
  // `line` counts the line breaks before `at`, the end of the last token found.
  let at = 0;
  let line = 0;
  for (const token of tokens) {
    const found = token.raw === '' ? -1 : text.startsWith(token.raw, at) ? at : near(text, token.raw, at);
    let start = line;
    if (found >= 0) {
      start = line + breaks(text, at, found);
      line = start + breaks(token.raw, 0, token.raw.length);
      at = found + token.raw.length;
    }
    if (token.type === 'space') continue;
    const one = Object.assign([token], { links: tokens.links }) as TokensList;
    html.push(marked.parser(one));
    lines.push(start);
  }
  return { html, lines };
}

/** Where `raw` is in the next few kB after `at` (what a link definition takes), or -1: a miss costs no more than that. */
function near(text: string, raw: string, at: number): number {
  const found = text.slice(at, at + 4096 + raw.length).indexOf(raw);
  return found < 0 ? -1 : at + found;
}

/** Line breaks in text[from, to). */
function breaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) count += 1;
  return count;
}
