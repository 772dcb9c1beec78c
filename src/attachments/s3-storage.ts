import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigError, type AttachmentStorageConfig } from '../config.js';
import type { AttachmentStorage } from './storage.js';

type S3Config = Extract<AttachmentStorageConfig, { kind: 's3' }>;

/** The SDK's packages: optional dependencies, so an install without S3 (the image's default) leaves them out. */
const SDK_PACKAGES = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage'];

/** At start-up, for ATTACHMENT_STORAGE=s3: a missing SDK is a configuration error, not a failed first upload. */
export async function requireS3Sdk(): Promise<void> {
  try {
    await Promise.all(SDK_PACKAGES.map((name) => import(name)));
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError(
      `ATTACHMENT_STORAGE=s3 needs the AWS SDK (${SDK_PACKAGES.join(', ')}), which this install left out: ` +
        'install with optional dependencies (npm ci, without --omit=optional), or build the image with --build-arg WITH_S3=yes',
    );
  }
}

/**
 * Any S3-compatible store through the AWS SDK v3. Uploads stream as multipart uploads of 5 MiB
 * parts (lib-storage), so a file is never whole in memory; reads ask for the byte range needed.
 */
export function s3Storage(config: S3Config): AttachmentStorage {
  // The SDK is a few hundred modules (~0.2 s of a start-up): imported here, not at the top, so an
  // instance that stores files in its database never loads it.
  let ready:
    | Promise<{
        client: S3Client;
        sdk: typeof import('@aws-sdk/client-s3');
        Upload: typeof import('@aws-sdk/lib-storage').Upload;
      }>
    | undefined;
  const load = () =>
    (ready ??= (async () => {
      const [sdk, { Upload }] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
      const client = new sdk.S3Client({
        region: config.region,
        forcePathStyle: config.forcePathStyle,
        ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
        ...(config.accessKeyId === undefined || config.secretAccessKey === undefined
          ? {}
          : { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }),
      });
      return { client, sdk, Upload };
    })().catch((error: unknown) => {
      ready = undefined; // tried again by the next request
      throw error;
    }));
  // Started now, so the first upload does not wait for it; a failure is met (and retried) on use.
  load().catch(() => undefined);
  const Bucket = config.bucket;
  return {
    kind: 's3',
    async put(key, body) {
      const { client, Upload } = await load();
      await new Upload({
        client,
        params: { Bucket, Key: key, Body: Readable.from(body) },
        queueSize: 2,
        partSize: 5 * 1024 * 1024,
      }).done();
    },
    get(key, size, range) {
      async function* bytes() {
        if (size === 0 || (range !== undefined && range.end < range.start)) return;
        const { client, sdk } = await load();
        const answer = await client.send(
          new sdk.GetObjectCommand({
            Bucket,
            Key: key,
            ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }),
          }),
        );
        yield* answer.Body as Readable;
      }
      return Readable.from(bytes(), { objectMode: false });
    },
    async delete(key) {
      const { client, sdk } = await load();
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}
