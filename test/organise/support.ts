import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Session } from '../helpers/harness.js';
import { okJson, type Note } from '../notes/support.js';

/** Helpers for the organise tests: folders, filing, tags. */

export interface Folder {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
}
export interface FolderRow extends Folder {
  note_count: number;
}
export interface NoteRow {
  id: string;
  title: string;
  folder_id: string | null;
  pinned: boolean;
  archived: boolean;
  tags: string[];
  updated_at: string;
}

export function organiseClient(app: () => FastifyInstance) {
  const call = (s: Session, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    app().inject({ method, url, headers: s.auth, ...(payload === undefined ? {} : { payload: payload as string }) });
  const client = {
    call,
    createFolder: (s: Session, body: unknown) => call(s, 'POST', '/api/folders', body),
    async folder(s: Session, name: string, parentId: string | null = null): Promise<Folder> {
      const res = await client.createFolder(s, { name, parent_id: parentId });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Folder;
    },
    folders: async (s: Session) => okJson<FolderRow[]>(await call(s, 'GET', '/api/folders')),
    updateFolder: (s: Session, id: string, body: unknown) => call(s, 'PATCH', `/api/folders/${id}`, body),
    deleteFolder: (s: Session, id: string) => call(s, 'DELETE', `/api/folders/${id}`),
    file: (s: Session, id: string, body: unknown) => call(s, 'PATCH', `/api/notes/${id}`, body),
    async fileOk(s: Session, id: string, body: unknown): Promise<Note> {
      return okJson<Note>(await client.file(s, id, body));
    },
    list: async (s: Session, query = '') => okJson<NoteRow[]>(await call(s, 'GET', `/api/notes${query}`)),
    ids: async (s: Session, query = '') => (await client.list(s, query)).map((n) => n.id),
    tags: async (s: Session) => okJson<Array<{ name: string; count: number }>>(await call(s, 'GET', '/api/tags')),
    async note(s: Session, content: string, title = 'n', folderId?: string): Promise<Note> {
      const res = await call(s, 'POST', '/api/notes', {
        title,
        content,
        ...(folderId === undefined ? {} : { folder_id: folderId }),
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Note;
    },
    async save(s: Session, id: string, content: string, title = 'n'): Promise<void> {
      const res = await call(s, 'POST', `/api/notes/${id}/versions`, { title, content });
      assert.equal(res.statusCode, 204, res.body);
    },
  };
  return client;
}

export const statusOf = (res: LightMyRequestResponse) => res.statusCode;
