import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { noteOwnerOf } from '../members/note-access.js';
import type { RoutePolicy } from '../http/policy.js';
import { PaginationQuery, isTrue, pageOf } from '../http/schemas.js';
import { normalizeId } from '../shared/ids.js';
import { ifMatchVersions } from './if-match.js';
import * as schemas from './notes.schemas.js';
import * as notes from './notes.service.js';
import * as history from './history.service.js';
import * as merging from './merge.service.js';
import { createDiffRunner } from './diff-runner.js';

export interface NotesRoutesOptions {
  db: Db;
  /** TRASH_DAYS: DELETE moves a note to the trash, or deletes it at once when 0. */
  trashDays: number;
  /** Tests only: pauses at named steps (a merging save's `notes:merge-read`). */
  checkpoint?: (step: string) => Promise<void>;
}

/** 1 MiB of content may grow sixfold when every character is JSON-escaped as \u0000. */
const NOTE_BODY_LIMIT = 7 * 1024 * 1024;

const invalidBody = (reason: string) => Errors.validation(`Invalid request body: ${reason}`);

/** From a created note, the calls a client makes next. */
const createdNoteLinks = {
  getNote: { operationId: 'getNote', parameters: { noteID: '$response.body#/id' }, description: 'Read the note' },
  listVersions: {
    operationId: 'listVersions',
    parameters: { noteID: '$response.body#/id' },
    description: 'Its history',
  },
  addVersion: {
    operationId: 'addVersion',
    parameters: { noteID: '$response.body#/id' },
    description: 'Save a new version of it',
  },
};

/** Creating and listing: the caller's own notes, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };
/** Routes on one note declare the role they need (members/note-access.ts settles whose note it is). */
const READ: RoutePolicy = { auth: 'access', note: 'viewer' };
const EDIT: RoutePolicy = { auth: 'access', note: 'editor' };
const OWN: RoutePolicy = { auth: 'access', note: 'owner' };
const tags = ['notes'];

export const notesRoutes: FastifyPluginAsyncTypebox<NotesRoutesOptions> = async (
  app,
  { db, trashDays, checkpoint },
) => {
  const diffRunner = createDiffRunner();
  app.addHook('onClose', async () => diffRunner.close());

  app.post(
    '/',
    {
      bodyLimit: NOTE_BODY_LIMIT,
      // 404: the caller's account was deleted while its access token is still valid, or folder_id is not the caller's folder.
      config: {
        policy: SIGNED_IN,
        invalidBody,
        docs: { errors: [404], headers: { 201: ['Location', 'ETag'] }, links: { 201: createdNoteLinks } },
      },
      schema: {
        tags,
        operationId: 'createNote',
        summary: 'Create a note',
        description:
          'Creates a note with version 1. The body is optional: absent fields get the title "Untitled", empty content and the top level. ' +
          "A `folder_id` that is not one of the caller's folders is 404 `Folder not found`.",
        body: schemas.CreateNoteBody,
        response: { 201: schemas.NoteSchema },
      },
      // Fastify validates an absent body as null; here no body means no fields, so placeholders.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const { folder_id, ...text } = request.body ?? {};
      const note = await notes.createNote(db, callerId(request), {
        ...text,
        ...(folder_id != null && { folder_id: normalizeId(folder_id) }),
      });
      return reply.code(201).header('location', `/api/notes/${note.id}`).header('etag', `"${note.version}"`).send(note);
    },
  );

  app.get(
    '/',
    {
      config: { policy: SIGNED_IN, docs: { errors: [404], headers: { 200: ['X-Total-Count'] } } },
      schema: {
        tags,
        operationId: 'listNotes',
        summary: "List the caller's notes",
        description:
          'Pinned notes first, then most recently updated first; every note unless limit is given, and X-Total-Count says how many match in all. Archived notes are left out ' +
          'unless archived=true, which lists only them. `folder` (an id, or `root`) and `tag` narrow the list; a folder that is not the ' +
          "caller's is 404 `Folder not found`.",
        querystring: schemas.NotesQuery,
        response: { 200: { type: 'array', items: schemas.NoteRowSchema } },
      },
    },
    async (request, reply) => {
      const { limit, offset = 0, folder, tag, pinned, archived } = request.query;
      // Without a limit every note is returned; an offset alone still pages from there.
      const page =
        limit === undefined && offset === 0 ? undefined : { limit: limit ?? Number.MAX_SAFE_INTEGER, offset };
      const { rows, total } = await notes.listNotes(
        db,
        callerId(request),
        {
          folder: folder === undefined || folder === 'root' ? folder : normalizeId(folder),
          tag,
          pinned: pinned === undefined ? undefined : isTrue(pinned),
          archived: isTrue(archived),
        },
        page,
      );
      void reply.header('x-total-count', String(total));
      return rows;
    },
  );

  app.patch(
    '/:noteID',
    {
      config: { policy: OWN, invalidBody, docs: { headers: { 200: ['ETag'] } } },
      schema: {
        tags,
        operationId: 'fileNote',
        summary: 'File a note: folder, pin, archive',
        description:
          'Moves the note to a folder (null: the top level), pins or archives it. Not a new version: `version` and `updated_at` ' +
          "stay as they are. A `folder_id` that is not one of the caller's folders is 404 `Folder not found`.",
        params: schemas.NoteParams,
        body: schemas.FileNoteBody,
        response: { 200: schemas.NoteSchema },
      },
    },
    async (request, reply) => {
      const { folder_id, pinned, archived } = request.body;
      const note = await notes.fileNote(db, noteOwnerOf(request), normalizeId(request.params.noteID), {
        ...(folder_id !== undefined && { folder_id: folder_id === null ? null : normalizeId(folder_id) }),
        ...(pinned !== undefined && { pinned }),
        ...(archived !== undefined && { archived }),
      });
      return reply.header('etag', `"${note.version}"`).send(note);
    },
  );

  app.get(
    '/:noteID',
    {
      config: { policy: READ, docs: { headers: { 200: ['ETag'] } } },
      schema: {
        tags,
        operationId: 'getNote',
        summary: 'Read a note',
        params: schemas.NoteParams,
        response: { 200: schemas.NoteSchema },
      },
    },
    async (request, reply) => {
      const note = await notes.getNote(db, noteOwnerOf(request), normalizeId(request.params.noteID));
      return reply.header('etag', `"${note.version}"`).send(note);
    },
  );

  app.delete(
    '/:noteID',
    {
      config: { policy: OWN },
      schema: { tags, operationId: 'deleteNote', summary: 'Delete a note', params: schemas.NoteParams },
    },
    async (request, reply) => {
      const noteId = normalizeId(request.params.noteID);
      await notes.deleteNote(db, noteOwnerOf(request), noteId, trashDays);
      return reply.code(204).send();
    },
  );

  app.get(
    '/:noteID/versions',
    {
      config: { policy: READ },
      schema: {
        tags,
        operationId: 'listVersions',
        summary: "A note's history",
        description: 'Versions newest first.',
        params: schemas.NoteParams,
        querystring: PaginationQuery,
        response: { 200: { type: 'array', items: schemas.VersionRowSchema } },
      },
    },
    async (request) =>
      notes.listVersions(db, noteOwnerOf(request), normalizeId(request.params.noteID), pageOf(request.query)),
  );

  app.post(
    '/:noteID/versions',
    {
      bodyLimit: NOTE_BODY_LIMIT,
      config: {
        policy: EDIT,
        invalidBody,
        docs: {
          errors: [409, 412],
          noContent: true,
          headers: { 201: ['Location', 'ETag'], 204: ['ETag'], 412: ['ETag'] },
        },
      },
      schema: {
        tags,
        operationId: 'addVersion',
        summary: 'Save a new version',
        description:
          'Adds the next version: 204 with its ETag. With If-Match, only when the note is still at that version (else 412 naming the current one). ' +
          'With merge=true and a stale If-Match, the body is merged with the changes made since that version: 201 with the note as saved and `merged: true`, ' +
          'or 409 `merge_conflict` listing where both changed, saving nothing (docs/api.md, Notes).',
        params: schemas.NoteParams,
        querystring: schemas.AddVersionQuery,
        headers: schemas.IfMatchHeaders,
        body: schemas.NewVersionBody,
        response: {
          201: schemas.MergedNoteSchema,
          204: Type.Null({ description: 'No content' }),
          409: {
            description: 'Conflict',
            content: { 'application/problem+json': { schema: schemas.SaveConflictProblem } },
          },
        },
      },
    },
    async (request, reply) => {
      const expected = ifMatchVersions(request.headers['if-match']);
      const noteId = normalizeId(request.params.noteID);
      const author = callerId(request);
      const saved =
        request.query.merge === 'true'
          ? await merging.addVersionMerging(
              db,
              diffRunner,
              noteOwnerOf(request),
              noteId,
              request.body,
              expected,
              author,
              checkpoint,
            )
          : {
              merged: false as const,
              version: await notes.addVersion(
                db,
                noteOwnerOf(request),
                noteId,
                request.body,
                expected,
                author,
                checkpoint,
              ),
            };
      const version = saved.merged ? saved.note.version : saved.version;
      // No body at all: send(null) went through the preSerialization hooks and the serializer (as
      // "null", dropped again for a 204), a twentieth of a save's CPU.
      if (!saved.merged) return (reply as FastifyReply).code(204).header('etag', `"${version}"`).send();
      return reply
        .code(201)
        .header('location', `/api/notes/${noteId}/${saved.note.version_id}`)
        .header('etag', `"${version}"`)
        .send({ ...saved.note, merged: true });
    },
  );

  app.get(
    '/:noteID/diff',
    {
      config: { policy: READ },
      schema: {
        tags,
        operationId: 'diffVersions',
        summary: 'Diff two versions',
        description:
          'Compares any two versions of the note (default: the current one and the version before it): JSON hunks and a unified diff as `diff -u` writes it. Past a work budget the diff is coarser (changed regions replaced whole), and an answer lists at most 50,000 lines; either way `complete` is false and `stats` still counts every changed line.',
        params: schemas.NoteParams,
        querystring: schemas.DiffQuery,
        response: { 200: schemas.DiffSchema },
      },
    },
    async (request, reply) => {
      const { from, to, context = 3 } = request.query;
      const json = await history.diffVersions(
        db,
        diffRunner,
        noteOwnerOf(request),
        normalizeId(request.params.noteID),
        { from, to, context },
      );
      // Already serialised (see diffVersions); a Buffer is sent as is, not through the response schema.
      return reply.type('application/json; charset=utf-8').send(json as never);
    },
  );

  app.post(
    '/:noteID/restore',
    {
      config: {
        policy: EDIT,
        invalidBody,
        docs: { errors: [412], headers: { 201: ['Location', 'ETag'], 412: ['ETag'] } },
      },
      schema: {
        tags,
        operationId: 'restoreVersion',
        summary: 'Restore a version',
        description:
          'Adds a new version with the title and content of the chosen one (by number or id) and `restored_from` set to its number. If-Match works as on saving a version.',
        params: schemas.NoteParams,
        headers: schemas.IfMatchHeaders,
        body: schemas.RestoreBody,
        response: { 201: schemas.NoteSchema },
      },
    },
    async (request, reply) => {
      const expected = ifMatchVersions(request.headers['if-match']);
      const noteId = normalizeId(request.params.noteID);
      const author = callerId(request);
      const note = await history.restoreVersion(db, noteOwnerOf(request), noteId, request.body, expected, author);
      return reply
        .code(201)
        .header('location', `/api/notes/${noteId}/${note.version_id}`)
        .header('etag', `"${note.version}"`)
        .send(note);
    },
  );

  app.patch(
    '/:noteID/:versionID',
    {
      config: { policy: EDIT, invalidBody },
      schema: {
        tags,
        operationId: 'labelVersion',
        summary: 'Name or unname a version',
        description:
          "Sets the version's label (1 to 100 characters, trimmed) or removes it with null. A labelled version is never pruned by history retention.",
        params: schemas.VersionParams,
        body: schemas.LabelBody,
        response: { 200: schemas.VersionSchema },
      },
    },
    async (request) =>
      history.labelVersion(
        db,
        noteOwnerOf(request),
        normalizeId(request.params.noteID),
        normalizeId(request.params.versionID),
        request.body.label,
      ),
  );

  app.get(
    '/:noteID/:versionID',
    {
      config: { policy: READ },
      schema: {
        tags,
        operationId: 'getVersion',
        summary: 'Read one version',
        params: schemas.VersionParams,
        response: { 200: schemas.VersionSchema },
      },
    },
    async (request) =>
      notes.getVersion(
        db,
        noteOwnerOf(request),
        normalizeId(request.params.noteID),
        normalizeId(request.params.versionID),
      ),
  );
};
