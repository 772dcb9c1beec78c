import { SaxesParser } from 'saxes';
import { AppError } from '../errors.js';

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
const MAX_DEPTH = 64;

export const badXml = (reason: string) => new AppError(400, 'invalid_xml', `The request body is not valid WebDAV XML: ${reason}`);

/**
 * Parses a request body strictly (saxes: well-formed XML with namespaces, no DTD entities
 * expanded, so no entity bombs or external fetches), into a small tree.
 */
export function parseXml(text: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let failure: string | undefined;
  parser.on('error', (error) => {
    failure ??= error.message;
  });
  parser.on('doctype', () => {
    failure ??= 'a document type declaration is not accepted';
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_DEPTH) {
      failure ??= `elements nested deeper than ${MAX_DEPTH}`;
      return;
    }
    const element: XmlElement = {
      ns: tag.uri ?? '', name: tag.local ?? tag.name,
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
  parser.on('cdata', onText);
  try {
    parser.write(text).close();
  } catch (error) {
    failure ??= (error as Error).message;
  }
  if (failure !== undefined) throw badXml(failure.replace(/^undefined:\d*:?\d*:?\s*/, ''));
  if (root === undefined) throw badXml('no root element');
  return root;
}

export const elements = (element: XmlElement): XmlElement[] => element.children.filter((c): c is XmlElement => typeof c !== 'string');
export const child = (element: XmlElement, ns: string, name: string) => elements(element).find((c) => c.ns === ns && c.name === name);
export const textOf = (element: XmlElement): string => element.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
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
  const attributes = element.attributes.map((a, i) => (a.ns === ''
    ? ` ${a.name}="${escapeXml(a.value)}"`
    : ` xmlns:a${i}="${escapeXml(a.ns)}" a${i}:${a.name}="${escapeXml(a.value)}"`)).join('');
  const open = `${element.name} xmlns="${escapeXml(element.ns)}"${attributes}`;
  if (element.children.length === 0) return `<${open}/>`;
  const inner = element.children.map((c) => (typeof c === 'string' ? escapeXml(c) : serialize(c))).join('');
  return `<${open}>${inner}</${element.name}>`;
}

/** An empty element naming a property (for propname answers and 404 propstats). */
export const emptyElement = (ns: string, name: string): string => (ns === DAV ? `<D:${name}/>` : `<${name} xmlns="${escapeXml(ns)}"/>`);

/** A live property's element with text content. */
export const davText = (name: string, text: string): string => `<D:${name}>${escapeXml(text)}</D:${name}>`;

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n';
