import { callerId } from '../http/caller.js';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/schema.js';
import type { RoutePolicy } from '../http/policy.js';
import { Query, Timestamp, Uuid } from '../http/schemas.js';
import { exportDocument, exportOwner } from './export.service.js';
import { createImportRunner } from './import-runner.js';
import { ImportDocument, IMPORT_RULES } from './import.schema.js';
import { importNotes } from './import.service.js';
import { markdownZip } from './markdown-zip.js';
import { archiveZip } from './archive-zip.js';
import { IMPORT_MAX_FILES, IMPORT_MAX_ZIP_ENTRIES, readArchive, type ArchiveParts } from './import-archive.js';
import { markdownFileDocument, readMarkdownZip, zipHolds } from './import-markdown.js';
import { ARCHIVE_DOCUMENT } from './archive-zip.js';
import { Errors } from '../errors.js';

/** A body read whole, refused with 413 past `max` (an archive needs random access). */
async function readBody(body: Readable, length: number | undefined, max: number): Promise<Buffer> {
  const tooLarge = () =>
    Errors.contentTooLarge(`The archive is larger than the import limit (IMPORT_MAX_BYTES, ${max} bytes)`);
  if (length !== undefined && length > max) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
import { AttachmentSchema } from '../attachments/attachments.schemas.js';
import type { AttachmentServices } from '../attachments/attachments.service.js';

export interface ExportRoutesOptions {
  db: Db;
  importMaxBytes: number;
  attachments: AttachmentServices;
  /** Tests only: pauses at named steps (`import:slot`). */
  checkpoint?: (step: string) => Promise<void>;
}

const ExportedVersion = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  title: Type.String(),
  content: Type.String(),
  created_at: Timestamp,
  label: Type.Union([Type.String(), Type.Null()]),
  restored_from: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
});

const ExportDocument = Type.Object(
  {
    format: Type.Literal('vellum-export'),
    format_version: Type.Literal(2),
    exported_at: Timestamp,
    username: Type.String(),
    folders: Type.Array(Type.String(), {
      description: 'every folder\'s path ("Work/Plans"), parents before their children',
    }),
    attachments: Type.Array(AttachmentSchema, {
      description: 'every file (metadata; the archive format holds the bytes too)',
    }),
    notes: Type.Array(
      Type.Object({
        id: Uuid,
        title: Type.String(),
        created_at: Timestamp,
        updated_at: Timestamp,
        folder: Type.Union([Type.String(), Type.Null()], {
          description: "the folder's path, or null for the top level",
        }),
        pinned: Type.Boolean(),
        archived: Type.Boolean(),
        versions: Type.Array(ExportedVersion, { description: 'oldest first, every version kept' }),
      }),
    ),
  },
  { $id: 'ExportDocument', description: 'every live note (not the trash) with its whole history' },
);

const ExportQuery = Query({
  format: Type.Optional(
    Type.Enum(['json', 'markdown', 'archive'], {
      default: 'json',
      description:
        '"json": the vellum-export document; "markdown": a zip of Markdown files with the attachments under attachments/; ' +
        '"archive": a zip of vellum-export.json and attachments/{id}, which POST /api/import takes back',
    }),
  ),
});

const ImportResult = Type.Object({
  notes: Type.Integer({ minimum: 0, description: 'notes created' }),
  versions: Type.Integer({ minimum: 0, description: 'versions created' }),
  skipped: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'with existing=skip or ask: notes left out because they were already here',
    }),
  ),
});

const ImportQuery = Query({
  existing: Type.Optional(
    Type.Union([Type.Literal('copy'), Type.Literal('skip'), Type.Literal('ask')], {
      description:
        'a note the caller already has — the same title, creation and last-change times, current version number and ' +
        'number of versions, as when the same export is imported again: copy (the default) imports it again beside the first, ' +
        'skip leaves it out, ask imports nothing and answers 409 import_existing with their number in `existing`',
    }),
  ),
});

const tags = ['export'];

/** A file name for Content-Disposition: the username is [a-z0-9_.-], so it needs no quoting. */
const attachment = (username: string, now: Date, extension: string) =>
  `attachment; filename="vellum-${username}-${now.toISOString().slice(0, 10)}.${extension}"`;

/**
 * A streamed body that fails part-way is destroyed with the error. Fastify then cuts the response
 * off (or, before its first byte, answers 500 through the error handler), so the client never gets
 * a truncated file that looks whole; it does not log the cut-off itself (request logging is ours,
 * app.ts), so this does, with the request's id. Attached as soon as the stream exists: an 'error'
 * event with no listener would throw and end the process.
 */
function logFailure(request: FastifyRequest, body: Readable): Readable {
  body.on('error', (err) => request.log.error({ err }, 'export stream failed; response aborted'));
  return body;
}

/** Every route here: the caller's own notes, with a valid access token. */
const SIGNED_IN: RoutePolicy = { auth: 'access' };
/** Everything the caller wrote: nothing may keep a copy. */
const EXPORT: RoutePolicy = { auth: 'access', noStore: true };

export const exportRoutes: FastifyPluginAsyncTypebox<ExportRoutesOptions> = async (
  app,
  { db, importMaxBytes, attachments, checkpoint },
) => {
  const importer = createImportRunner(importMaxBytes, checkpoint);
  app.addHook('onClose', () => importer.close());
  // POST /import reads its own body (up to 64 MiB), so that it is neither gathered into one buffer
  // nor parsed on the event loop: this plugin's JSON "parser" hands the handler the stream.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (_request, payload, done) => done(null, payload));
  app.addContentTypeParser('application/zip', (_request, payload, done) => done(null, payload));
  app.addContentTypeParser('text/markdown', (_request, payload, done) => done(null, payload));

  app.get(
    '/export',
    {
      config: { policy: EXPORT },
      schema: {
        tags,
        summary: 'Download every note with its whole history (JSON), or the current notes as Markdown files (zip)',
        querystring: ExportQuery,
        response: {
          200: {
            description: 'application/json (streamed) or, with format=markdown, application/zip',
            content: {
              'application/json': { schema: ExportDocument },
              'application/zip': { schema: { type: 'string', format: 'binary' } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { format = 'json' } = request.query;
      const owner = await exportOwner(db, callerId(request));
      const now = new Date();
      if (format === 'markdown') {
        const zip = logFailure(request, markdownZip(db, owner.id, attachments.storage));
        return reply
          .type('application/zip')
          .header('content-disposition', attachment(owner.username, now, 'zip'))
          .send(zip as never);
      }
      if (format === 'archive') {
        const zip = logFailure(request, archiveZip(db, owner, now, attachments.storage));
        return reply
          .type('application/zip')
          .header('content-disposition', attachment(`${owner.username}-archive`, now, 'zip'))
          .send(zip as never);
      }
      const document = logFailure(request, exportDocument(db, owner, now));
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', attachment(owner.username, now, 'json'))
        .send(document as never);
    },
  );

  app.post(
    '/import',
    {
      // 409: another request created a folder this import was creating, or (existing=ask) notes of it
      // are already here; nothing imported.
      config: { policy: SIGNED_IN, docs: { errors: [409] } },
      bodyLimit: importMaxBytes,
      schema: {
        tags,
        summary: 'Create notes from a vellum-export document (all or nothing)',
        description:
          `A vellum-export document (application/json), or an archive from GET /api/export?format=archive (application/zip: ` +
          "its files are stored anew and the notes' links rewritten to them), or Markdown: a zip of .md files such as GET " +
          '/api/export?format=markdown writes (application/zip without vellum-export.json: each file a note of one version, its front ' +
          "matter's title, created_at and updated_at kept, else its name and time; its directory its folder; files under attachments/ " +
          'stored anew and the relative links to them rewritten), or one Markdown file (text/markdown). A zip may hold at most ' +
          `${IMPORT_MAX_FILES} files and ${IMPORT_MAX_ZIP_ENTRIES} entries, no two entries may share bytes, and what it declares may not ` +
          'add up past the limits (each file ATTACHMENT_MAX_BYTES, the files together and the text together IMPORT_MAX_BYTES): ' +
          '400 from its directory, before anything is inflated or stored. Zip imports wait their turn one at a time (more than two waiting: 503). ' +
          `Up to IMPORT_MAX_BYTES (64 MiB by default; more is 413). A document that breaks a rule is 400 naming the first problem by its path, and nothing is imported. ${IMPORT_RULES}`,
        querystring: ImportQuery,
        body: ImportDocument,
        response: { 201: ImportResult },
      },
      // The body is a stream (above): the import runner validates the parsed document against the
      // same ImportDocument schema (import.validate.ts). Every other part is validated as usual.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : app.validatorCompiler!(route)),
    },
    async (request, reply) => {
      const ownerId = callerId(request);
      const { existing = 'copy' } = request.query;
      const length =
        request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
      // No body at all (no content type, so no parser ran) reads as an empty one: 400 naming what is missing.
      const body = (request.body as unknown as Readable | undefined) ?? Readable.from([]);
      const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      if (type === 'text/markdown') {
        const document = markdownFileDocument(await readBody(body, length, importMaxBytes), new Date().toISOString());
        return reply
          .code(201)
          .send(
            await importer.run(Readable.from([document]), document.length, (parsed) =>
              importNotes(db, ownerId, parsed, existing),
            ),
          );
      }
      if (type === 'application/zip') {
        // In the queue from the first byte: what a zip costs is not its size, and waiting requests hold no body.
        const result = await importer.queued(async (run) => {
          const bytes = await readBody(body, length, importMaxBytes);
          const archive: ArchiveParts = (await zipHolds(bytes, ARCHIVE_DOCUMENT))
            ? await readArchive(attachments, ownerId, bytes, importMaxBytes)
            : await readMarkdownZip(attachments, ownerId, bytes, importMaxBytes);
          try {
            return await run(Readable.from([archive.document]), archive.document.length, async (document) => {
              const imported = await importNotes(db, ownerId, document, existing);
              await archive.finish(document);
              return imported;
            });
          } catch (error) {
            await archive.abandon();
            throw error;
          }
        });
        return reply.code(201).send(result);
      }
      const result = await importer.run(body, length, (document) => importNotes(db, ownerId, document, existing));
      return reply.code(201).send(result);
    },
  );
};
