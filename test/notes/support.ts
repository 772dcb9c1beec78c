import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { problemOf, type Session } from '../helpers/harness.js';

/** Helpers for the black-box notes tests (test/notes/*). */

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const JSON_TYPE = 'application/json; charset=utf-8';
/** A well-formed UUID that no row has. */
export const MISSING_ID = '00000000-0000-4000-8000-000000000000';

export const NOTE_KEYS = [
  'id',
  'owner_id',
  'title',
  'content',
  'version',
  'version_id',
  'created_at',
  'updated_at',
  'folder_id',
  'pinned',
  'archived',
  'tags',
];
export const NOTE_ROW_KEYS = [
  'id',
  'owner_id',
  'title',
  'updated_at',
  'folder_id',
  'pinned',
  'archived',
  'tags',
  'preview',
];
/** How a note that was never filed and has no tags reads. */
export const UNFILED = { folder_id: null, pinned: false, archived: false, tags: [] as string[] };
export const VERSION_ROW_KEYS = [
  'id',
  'title',
  'version',
  'created_at',
  'label',
  'restored_from',
  'author_username',
  'authors',
];
export const VERSION_KEYS = [
  'id',
  'note_id',
  'title',
  'content',
  'version',
  'created_at',
  'label',
  'restored_from',
  'author_username',
  'authors',
];

import type { Note } from '../../src/notes/notes.service.js';
export type { Note };

export interface VersionRow {
  id: string;
  title: string;
  version: number;
  created_at: string;
  label: string | null;
  restored_from: number | null;
}

/**
 * Asserts the whole RFC 9457 body: about:blank, the status phrase as title, this detail and code,
 * plus any extensions given; on a 401 also `WWW-Authenticate: Bearer`.
 */
export function expectProblem(
  res: LightMyRequestResponse,
  status: number,
  detail: string,
  code: string,
  extensions: Record<string, unknown> = {},
): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.deepEqual(problemOf(res), {
    type: 'about:blank',
    title: STATUS_CODES[status],
    status,
    detail,
    code,
    ...extensions,
  });
  if (status === 401) assert.equal(res.headers['www-authenticate'], 'Bearer');
}

export const expectUnauthorized = (res: LightMyRequestResponse) =>
  expectProblem(res, 401, 'Unauthorized', 'unauthorized');
export const expectNoteNotFound = (res: LightMyRequestResponse) =>
  expectProblem(res, 404, 'Note not found', 'note_not_found');
export const expectVersionNotFound = (res: LightMyRequestResponse) =>
  expectProblem(res, 404, 'Version not found', 'version_not_found');
export const expectInvalidBody = (res: LightMyRequestResponse, reason: string) =>
  expectProblem(res, 400, `Invalid request body: ${reason}`, 'validation_failed');

/** Asserts a JSON 200 and returns its body. */
export function okJson<T>(res: LightMyRequestResponse): T {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  return res.json() as T;
}

/** Asserts a 204 with an empty body. */
export function expectNoContent(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');
}

/** Bound request helpers for one app. */
export function notesClient(app: () => FastifyInstance) {
  const inject = (options: InjectOptions) => app().inject(options);
  const withAuth = (s: Session | undefined, headers: Record<string, string> = {}) => ({
    ...(s?.auth ?? {}),
    ...headers,
  });
  return {
    inject,
    create: (s: Session | undefined, payload?: unknown, headers: Record<string, string> = {}) =>
      inject({
        method: 'POST',
        url: '/api/notes',
        headers: withAuth(s, headers),
        ...(payload === undefined ? {} : { payload: payload as string }),
      }),
    list: (s: Session | undefined, query = '') =>
      inject({ method: 'GET', url: `/api/notes${query}`, headers: withAuth(s) }),
    get: (s: Session | undefined, id: string, headers: Record<string, string> = {}) =>
      inject({ method: 'GET', url: `/api/notes/${id}`, headers: withAuth(s, headers) }),
    remove: (s: Session | undefined, id: string) =>
      inject({ method: 'DELETE', url: `/api/notes/${id}`, headers: withAuth(s) }),
    versions: (s: Session | undefined, id: string, query = '') =>
      inject({ method: 'GET', url: `/api/notes/${id}/versions${query}`, headers: withAuth(s) }),
    addVersion: (s: Session | undefined, id: string, payload: unknown, headers: Record<string, string> = {}) =>
      inject({
        method: 'POST',
        url: `/api/notes/${id}/versions`,
        headers: withAuth(s, headers),
        payload: payload as string,
      }),
    version: (s: Session | undefined, id: string, versionId: string) =>
      inject({ method: 'GET', url: `/api/notes/${id}/${versionId}`, headers: withAuth(s) }),

    /** POST /api/notes, asserting 201; returns the note. */
    async createOk(s: Session, payload?: unknown): Promise<Note> {
      const res = await this.create(s, payload);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Note;
    },
    /** POST /api/notes/{id}/versions, asserting 204. */
    async addVersionOk(s: Session, id: string, payload: { title: string; content: string }): Promise<void> {
      expectNoContent(await this.addVersion(s, id, payload));
    },
    /** Every version row of a note, newest first, through the history pages. */
    async history(s: Session, id: string): Promise<VersionRow[]> {
      const rows: VersionRow[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = okJson<VersionRow[]>(await this.versions(s, id, `?limit=100&offset=${offset}`));
        rows.push(...page);
        if (page.length < 100) return rows;
      }
    },
  };
}

export type NotesClient = ReturnType<typeof notesClient>;
