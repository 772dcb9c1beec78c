import { callerId } from '../http/caller.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import type { RoutePolicy } from '../http/policy.js';
import { normalizeId } from '../shared/ids.js';
import * as schemas from './folders.schemas.js';
import * as folders from './folders.service.js';

export interface FoldersRoutesOptions {
  db: Db;
  /** TRASH_DAYS: deleting a folder trashes its notes, or deletes them at once when 0. */
  trashDays: number;
  /** Tests only: pauses at named steps (`folders:move-checked`, `folders:create-checked`). */
  checkpoint?: (step: string) => Promise<void>;
  /** What a folder's delete does to the notes in it (notes/notes.repository.ts, wired in app.ts). */
  takeNotes: folders.TakeNotesInFolders;
}

/** Every route here: the caller's own folders, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };
const tags = ['folders'];
const invalidBody = (reason: string) => Errors.validation(`Invalid request body: ${reason}`);
const folderId = (params: { folderID: string }) => normalizeId(params.folderID);

export const foldersRoutes: FastifyPluginAsyncTypebox<FoldersRoutesOptions> = async (
  app,
  { db, trashDays, checkpoint, takeNotes },
) => {
  app.get(
    '/',
    {
      config: { policy: SIGNED_IN },
      schema: {
        tags,
        operationId: 'listFolders',
        summary: 'Every folder of the caller',
        description: 'Flat, ordered by name; `parent_id` builds the tree.',
        response: { 200: Type.Array(schemas.FolderListRowSchema) },
      },
    },
    async (request) => folders.listFolders(db, callerId(request)),
  );

  app.post(
    '/',
    {
      config: { policy: SIGNED_IN, invalidBody, docs: { errors: [404, 409], headers: { 201: ['Location'] } } },
      schema: {
        tags,
        operationId: 'createFolder',
        summary: 'Create a folder',
        description:
          "At the top level, or inside `parent_id` (404 `Folder not found` when that is not one of the caller's folders). " +
          'A sibling with the same name ignoring case is 409, as is a folder more than 32 levels deep (`folder_too_deep`) ' +
          'or past 10,000 folders in the account (`folder_limit`).',
        body: schemas.CreateFolderBody,
        response: { 201: schemas.FolderSchema },
      },
    },
    async (request, reply) => {
      const { name, parent_id } = request.body;
      const folder = await folders.createFolder(
        db,
        callerId(request),
        {
          name,
          ...(parent_id != null && { parent_id: normalizeId(parent_id) }),
        },
        checkpoint,
      );
      return reply.code(201).header('location', `/api/folders/${folder.id}`).send(folder);
    },
  );

  app.patch(
    '/:folderID',
    {
      config: { policy: SIGNED_IN, invalidBody, docs: { errors: [404, 409] } },
      schema: {
        tags,
        operationId: 'updateFolder',
        summary: 'Rename or move a folder',
        description:
          'Moving a folder into itself or below itself is 409, as is a sibling with the same name ignoring case, ' +
          'and a move that takes a folder below it past 32 levels deep (`folder_too_deep`). ' +
          "A `parent_id` that is not one of the caller's folders is 404.",
        params: schemas.FolderParams,
        body: schemas.UpdateFolderBody,
        response: { 200: schemas.FolderSchema },
      },
    },
    async (request) => {
      const { name, parent_id } = request.body;
      return folders.updateFolder(
        db,
        callerId(request),
        folderId(request.params),
        {
          ...(name !== undefined && { name }),
          ...(parent_id !== undefined && { parent_id: parent_id === null ? null : normalizeId(parent_id) }),
        },
        checkpoint,
      );
    },
  );

  app.delete(
    '/:folderID',
    {
      config: { policy: SIGNED_IN, docs: { errors: [404] } },
      schema: {
        tags,
        operationId: 'deleteFolder',
        summary: 'Delete a folder',
        description:
          'Removes the folder and every folder below it; the notes inside go to the trash. Restored, such a note comes back at the top level.',
        params: schemas.FolderParams,
      },
    },
    async (request, reply) => {
      await folders.deleteFolder(db, callerId(request), folderId(request.params), trashDays, takeNotes);
      return reply.code(204).send();
    },
  );
};
