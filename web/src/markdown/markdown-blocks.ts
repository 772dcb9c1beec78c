import { Marked, type TokensList } from 'marked';

const OPTIONS = { gfm: true, breaks: false, async: false } as const;
const plain = new Marked(OPTIONS);
let highlighting: Promise<Marked> | null = null;

/** A fenced code block (``` or ~~~) naming its language: only then is the highlighter loaded. */
const FENCE_WITH_LANGUAGE = /^ {0,3}(?:`{3,}|~{3,})[ \t]*[\w+#.-]/m;

/**
 * highlight.js (its common languages, ~40 kB gzipped) arrives on first need, in its own chunk:
 * most notes have no code. A language it does not know stays plain, escaped by marked.
 */
function withHighlighting(): Promise<Marked> {
  highlighting ??= Promise.all([import('highlight.js/lib/common'), import('marked-highlight')]).then(
    ([{ default: hljs }, { markedHighlight }]) => new Marked(OPTIONS, markedHighlight({
      langPrefix: 'hljs language-',
      highlight: (code, language) => (hljs.getLanguage(language) ? hljs.highlight(code, { language, ignoreIllegals: true }).value : code),
    })),
  ).catch((error: unknown) => {
    highlighting = null;
    throw error;
  });
  return highlighting;
}

/**
 * Markdown as HTML, one string per top-level block (heading, paragraph, list, table, code…), so the
 * page can replace only the blocks an edit changed. Each block is parsed with the whole text's
 * link definitions, so `[x][ref]` still finds a `[ref]: url` elsewhere. Not yet sanitised.
 */
export async function toBlocks(source: string): Promise<string[]> {
  const marked = FENCE_WITH_LANGUAGE.test(source) ? await withHighlighting().catch(() => plain) : plain;
  const tokens = marked.lexer(source);
  // parse() runs the extensions' token walkers (the highlighter's); lexer() and parser() do not.
  const walk = marked.defaults.walkTokens;
  if (walk) marked.walkTokens(tokens, walk);
  const blocks: string[] = [];
  for (const token of tokens) {
    if (token.type === 'space') continue;
    const one = Object.assign([token], { links: tokens.links }) as TokensList;
    blocks.push(marked.parser(one));
  }
  return blocks;
}
