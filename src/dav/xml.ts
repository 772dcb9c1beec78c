import { SaxesParser } from 'saxes';
import { AppError, Errors } from '../errors.js';

/** An element with its namespace resolved; text children as strings. */
export interface XmlElement {
  ns: string;
  name: string;
  attributes: Array<{ ns: string; name: string; value: string }>;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

export const DAV = 'DAV:';
/** Deeper documents are refused: no WebDAV body needs more, and every walk below stays shallow. */
export const XML_MAX_DEPTH = 64;
/**
 * Bounds on what one body may hold, far past what a WebDAV client sends (a PROPPATCH changes at
 * most 200 properties), so that parsing any body within its limit stays well under 100 ms:
 * unbounded, 1 MiB of `<a/>`, `<!---->`, attributes or `&#65;` took saxes 90-330 ms.
 */
const MAX_MARKUP = 10_000;
const MAX_ATTRIBUTES = 10_000;
const MAX_REFERENCES = 10_000;

export const badXml = Errors.invalidXml;

/**
 * Parses a request body strictly (saxes: well-formed XML with namespaces, no DTD entities
 * expanded, so no entity bombs or external fetches), into a small tree.
 *
 * The first problem ends the parse: the handlers throw out of saxes' write(), so nothing past it
 * is read. Letting saxes go on cost the square of the depth (it resolves each element's namespace
 * by walking every open element), 22 s for 24,000 levels (docs/api.md, "Limits"), and one error per byte of a
 * malformed body; stopped at XML_MAX_DEPTH, a body at the limit costs what a shallow one does.
 */
export function parseXml(text: string): XmlElement {
  checkReferences(text);
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  parser.on('error', (error) => {
    throw badXml(error.message.replace(/^undefined:\d*:?\d*:?\s*/, ''));
  });
  parser.on('doctype', () => {
    throw badXml('a document type declaration is not accepted');
  });
  let markup = 0;
  let attributeCount = 0;
  const countMarkup = () => {
    if (++markup > MAX_MARKUP)
      throw badXml(`more than ${MAX_MARKUP} elements, comments, CDATA sections and processing instructions`);
  };
  parser.on('opentagstart', () => {
    if (stack.length >= XML_MAX_DEPTH) throw badXml(`elements nested deeper than ${XML_MAX_DEPTH}`);
    countMarkup();
  });
  parser.on('comment', countMarkup);
  parser.on('processinginstruction', countMarkup);
  parser.on('attribute', () => {
    if (++attributeCount > MAX_ATTRIBUTES) throw badXml(`more than ${MAX_ATTRIBUTES} attributes`);
  });
  parser.on('opentag', (tag) => {
    const element: XmlElement = {
      ns: tag.uri ?? '',
      name: tag.local ?? tag.name,
      attributes: Object.values(tag.attributes)
        .filter((a) => a.prefix !== 'xmlns' && a.name !== 'xmlns')
        .map((a) => ({ ns: a.uri, name: a.local, value: a.value })),
      children: [],
    };
    const parent = stack.at(-1);
    if (parent === undefined) root = element;
    else parent.children.push(element);
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const onText = (text: string) => {
    const parent = stack.at(-1);
    if (parent !== undefined) parent.children.push(text);
  };
  parser.on('text', onText);
  parser.on('cdata', (text) => {
    countMarkup();
    onText(text);
  });
  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw badXml((error as Error).message.replace(/^undefined:\d*:?\d*:?\s*/, ''));
  }
  if (root === undefined) throw badXml('no root element');
  return root;
}

/**
 * Entity and character references (`&amp;`, `&#65;`), which saxes decodes one by one and tells no
 * handler about, are counted before it starts (with indexOf: about a millisecond for 1 MiB).
 */
function checkReferences(text: string): void {
  let count = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    if (++count > MAX_REFERENCES) throw badXml(`more than ${MAX_REFERENCES} entity or character references`);
  }
}

export const elements = (element: XmlElement): XmlElement[] =>
  element.children.filter((c): c is XmlElement => typeof c !== 'string');
export const child = (element: XmlElement, ns: string, name: string) =>
  elements(element).find((c) => c.ns === ns && c.name === name);
export const textOf = (element: XmlElement): string =>
  element.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
export const is = (element: XmlElement, ns: string, name: string) => element.ns === ns && element.name === name;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/**
 * The element as self-contained XML: each element declares its own namespace as the default one
 * (so no prefix can clash with the document it is placed in); attributes in a namespace get
 * prefixes of their own.
 */
export function serialize(element: XmlElement): string {
  const attributes = element.attributes
    .map((a, i) =>
      a.ns === ''
        ? ` ${a.name}="${escapeXml(a.value)}"`
        : ` xmlns:a${i}="${escapeXml(a.ns)}" a${i}:${a.name}="${escapeXml(a.value)}"`,
    )
    .join('');
  const open = `${element.name} xmlns="${escapeXml(element.ns)}"${attributes}`;
  if (element.children.length === 0) return `<${open}/>`;
  const inner = element.children.map((c) => (typeof c === 'string' ? escapeXml(c) : serialize(c))).join('');
  return `<${open}>${inner}</${element.name}>`;
}

/** An empty element naming a property (for propname answers and 404 propstats). */
export const emptyElement = (ns: string, name: string): string =>
  ns === DAV ? `<D:${name}/>` : `<${name} xmlns="${escapeXml(ns)}"/>`;

/** A live property's element with text content. */
export const davText = (name: string, text: string): string => `<D:${name}>${escapeXml(text)}</D:${name}>`;

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n';
