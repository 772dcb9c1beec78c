/**
 * Pieces of the OpenAPI document that routes refer to by name, and the passes that complete the
 * generated document: what a route declares once (headers, links) becomes the document's own form.
 */

export type HeaderName = 'ETag' | 'Location' | 'Set-Cookie' | 'X-CSRF-Token' | 'Cache-Control' | 'X-Total-Count';

export interface Link {
  operationId: string;
  parameters: Record<string, string>;
  description: string;
}

/** What a route adds to its documented responses, by status. */
export interface RouteDocs {
  /** Error statuses beyond those the route's auth and method imply (e.g. 404 for a deleted account). */
  errors?: readonly number[];
  /** Answers 204 with no body (DELETE routes do without saying so). */
  noContent?: true;
  headers?: Partial<Record<number, readonly HeaderName[]>>;
  links?: Partial<Record<number, Record<string, Link>>>;
}

const HEADERS: Record<
  HeaderName | 'X-Request-Id' | 'WWW-Authenticate' | 'Retry-After',
  { description: string; schema: object }
> = {
  'X-Request-Id': {
    description:
      "The request id: the caller's own X-Request-Id when it was safe to keep, else a new one. Quote it in reports.",
    schema: { type: 'string', maxLength: 128 },
  },
  'WWW-Authenticate': { description: 'Always `Bearer`, possibly with an error attribute', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  ETag: {
    description:
      'Strong entity tag: of a note, its current version (e.g. `"3"`; send it back in If-Match); of a file, its SHA-256 (send it back in If-None-Match)',
    schema: { type: 'string' },
  },
  Location: { description: 'Path of what was created', schema: { type: 'string' } },
  'X-Total-Count': {
    description: 'How many items match in all, whatever page (limit, offset) was asked for',
    schema: { type: 'integer', minimum: 0 },
  },
  'Set-Cookie': {
    description:
      'The refresh cookie `app.refresh_token` (HttpOnly, Path /api/auth/cookie) and the view cookie `app.expires_at` ' +
      '(Path /), SameSite=Strict, Secure in production; cleared with Max-Age 0 on logout and account deletion. ' +
      'The CSRF route sets the CSRF secret cookie instead.',
    schema: { type: 'string' },
  },
  'X-CSRF-Token': {
    description: 'The CSRF token to send back in the X-CSRF-Token header of POST /api/auth/cookie/refresh',
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      '`no-store` (tokens and account data), or `private, no-cache` (a file: kept by the browser, asked again before use)',
    schema: { type: 'string' },
  },
};

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Adds the headers every response has, those that come with a status, and the route's own. */
const SUCCESS_DESCRIPTIONS: Record<string, string> = { 200: 'OK', 201: 'Created', 204: 'Done; no body' };

/** `noStore`: the route's policy sends Cache-Control: no-store on every answer, errors included (security-headers.ts). */
export function completeResponses(responses: Json, docs: RouteDocs | undefined, noStore = false): void {
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue;
    if (response.description === 'Default Response' && SUCCESS_DESCRIPTIONS[status] !== undefined)
      response.description = SUCCESS_DESCRIPTIONS[status];
    const names: string[] = ['X-Request-Id'];
    if (status === '401') names.push('WWW-Authenticate');
    if (status === '429' || status === '503') names.push('Retry-After');
    if (noStore) names.push('Cache-Control');
    names.push(...(docs?.headers?.[Number(status)] ?? []));
    const headers = (response.headers ??= {}) as Json;
    for (const name of names) headers[name] ??= HEADERS[name as keyof typeof HEADERS];
    const links = docs?.links?.[Number(status)];
    if (links !== undefined) response.links = links;
  }
}

/** `getApiNotesNoteIDVersions` for GET /api/notes/{noteID}/versions: a fallback for routes that name none. */
export function derivedOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** `/api/notes/:noteID/` → `/api/notes/{noteID}`: the one documented form of a path. */
export function documentedPath(url: string): string {
  const path = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}
