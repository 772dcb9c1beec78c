import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { AttachmentStorageConfig } from '../config.js';
import type { AttachmentStorage } from './storage.js';

type S3Config = Extract<AttachmentStorageConfig, { kind: 's3' }>;

/**
 * Any S3-compatible store through the AWS SDK v3. Uploads stream as multipart uploads of 5 MiB
 * parts (lib-storage), so a file is never whole in memory; reads ask for the byte range needed.
 */
export function s3Storage(config: S3Config): AttachmentStorage {
  const client = new S3Client({
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    ...(config.accessKeyId === undefined || config.secretAccessKey === undefined
      ? {} : { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }),
  });
  const Bucket = config.bucket;
  return {
    kind: 's3',
    async put(key, body) {
      await new Upload({ client, params: { Bucket, Key: key, Body: Readable.from(body) }, queueSize: 2, partSize: 5 * 1024 * 1024 }).done();
    },
    get(key, size, range) {
      async function* bytes() {
        if (size === 0 || (range !== undefined && range.end < range.start)) return;
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: key, ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }));
        yield* answer.Body as Readable;
      }
      return Readable.from(bytes(), { objectMode: false });
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}
