import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import S3rver from 's3rver';
import type { Session } from '../helpers/harness.js';

/** A multipart/form-data body with one file part, as a browser's FormData sends it. */
export function multipart(
  bytes: Buffer,
  { filename = 'file.bin', type = 'application/octet-stream', field = 'file' } = {},
) {
  const boundary = `----vellum${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

export interface Uploaded {
  id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
}

export function uploadRaw(
  app: FastifyInstance,
  session: Session,
  bytes: Buffer,
  options: Parameters<typeof multipart>[1] = {},
) {
  const body = multipart(bytes, options);
  return app.inject({
    method: 'POST',
    url: '/api/attachments',
    headers: { ...session.auth, ...body.headers },
    payload: body.payload,
  });
}

export async function upload(
  app: FastifyInstance,
  session: Session,
  bytes: Buffer,
  options: Parameters<typeof multipart>[1] = {},
): Promise<Uploaded> {
  const res = await uploadRaw(app, session, bytes, options);
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as Uploaded;
}

export function download(
  app: FastifyInstance,
  session: Session,
  id: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: `/api/attachments/${id}`, headers: { ...session.auth, ...headers } });
}

/** 1×1 transparent PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * A real S3-compatible server for the s3 backend's tests: s3rver, from npm (MinIO, Garage and
 * SeaweedFS are not in Debian, and nothing else can be downloaded here). It speaks the S3 REST API
 * with signatures, ranges and multipart uploads, storing objects in a scratch directory.
 */
export async function startS3(): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'vellum-s3-'));
  const bucket = 'vellum-test';
  const s3 = new S3rver({ directory, silent: true, configureBuckets: [{ name: bucket, configs: [] }] });
  await s3.configureBuckets();
  const server = http.createServer(s3.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: {
      ATTACHMENT_STORAGE: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'on',
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
