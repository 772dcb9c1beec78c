import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { withDeviceCopy } from '../offline/device-copy';
import { Session } from './session';

export type User = components['schemas']['User'];
/** The JSON body of a 200 answer to a path and method, from the generated schema. */
export type Json<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;
export type Note = Json<'/api/notes/{noteID}', 'get'>;
export type NoteRow = components['schemas']['NoteRow'];
export type SearchResult = components['schemas']['SearchResult'];
export type TrashEntry = components['schemas']['TrashEntry'];
export type Folder = components['schemas']['FolderListRow'];
export type TagCount = components['schemas']['TagCount'];
export type SessionRow = components['schemas']['Session'];
export type AuthEvent = components['schemas']['AuthEvent'];
export type AttachmentRow = components['schemas']['AttachmentRow'];
export type PasswordRulesRow = Json<'/api/auth/password-rules', 'get'>;
export type Attachment = Omit<AttachmentRow, 'references'>;

/** An API failure carrying the server's problem+json `detail` (the message users see). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

let signedOutListener: () => void = () => {};
export function onSignedOut(listener: () => void): void {
  signedOutListener = listener;
}

export const session = new Session({
  fetch: (request) => globalThis.fetch(request),
  locks: typeof navigator !== 'undefined' ? navigator.locks : undefined,
  baseUrl: globalThis.location?.origin ?? 'http://localhost',
  onSignedOut: () => signedOutListener(),
  // A first visit's login page asks for /api/auth/config without a doomed refresh first.
  mayHaveSession: () => mayHaveSession(),
});

export const api = createClient<paths>({
  baseUrl: globalThis.location?.origin ?? 'http://localhost',
  // Notes seen before are kept on this device and shown when the service cannot be reached.
  fetch: withDeviceCopy(session.fetch),
});

/** The body of a successful answer, or an ApiError with the server's message. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  throw toApiError(result.response, result.error);
}

export function toApiError(response: Response, body: unknown): ApiError {
  const detail =
    typeof body === 'object' && body !== null && 'detail' in body ? String((body as { detail: unknown }).detail) : '';
  return new ApiError(response.status, detail || `${response.status} ${response.statusText}`, body);
}

/** For what is not JSON both ways: export downloads (a zip or a file) and import uploads (the file as it is). */
export async function raw(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  return session.fetch(
    new Request(new URL(path, globalThis.location.origin), { ...init, headers, credentials: 'same-origin' }),
  );
}

export function errorMessage(error: unknown): string {
  // fetch's own failure (offline, server down) says only "Failed to fetch".
  if (error instanceof TypeError && /fetch|network|load failed/i.test(error.message))
    return 'The server cannot be reached. Check your connection and try again; nothing was changed.';
  return error instanceof Error ? error.message : String(error);
}

/** Whether the view cookie says a refresh cookie may exist (saves a doomed refresh on first visit). */
export function mayHaveSession(): boolean {
  const match = /(?:^|;\s*)app\.expires_at=(\d+)/.exec(globalThis.document?.cookie ?? '');
  return match !== null && Number(match[1]) * 1000 > Date.now();
}
