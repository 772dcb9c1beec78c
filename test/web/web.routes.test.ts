// Serving the web client: index.html for every client path (no-cache, strict CSP), hashed assets
// cached for a year, the API's own 404s untouched, nothing outside the build directory reachable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { CLIENT_CSP, CLIENT_CSP_REMOTE_IMAGES } from '../../src/web/web.routes.js';
import { testConfig } from '../helpers/harness.js';

const INDEX = '<!doctype html><title>Vellum</title><script type="module" src="/assets/index-abc123.js"></script>';

describe('web client serving', () => {
  let dir: string;
  let database: Database;
  let app: FastifyInstance;
  let bare: FastifyInstance;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-web-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
    fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    // What the build writes beside its text files (web/compress-plugin.ts).
    const big = 'export const words = ' + JSON.stringify('lorem ipsum '.repeat(500)) + ';\n';
    fs.writeFileSync(path.join(dir, 'assets', 'big-abc123.js'), big);
    fs.writeFileSync(path.join(dir, 'assets', 'big-abc123.js.br'), zlib.brotliCompressSync(big));
    fs.writeFileSync(path.join(dir, 'assets', 'big-abc123.js.gz'), zlib.gzipSync(big));
    fs.writeFileSync(path.join(dir, 'index.html.gz'), zlib.gzipSync(INDEX));
    fs.writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    fs.writeFileSync(path.join(os.tmpdir(), 'vellum-web-secret.txt'), 'secret');
    const config = testConfig('sqlite::memory:');
    database = openDatabase(config.database);
    app = await buildApp({ config, database, logger: false, webRoot: dir });
    bare = await buildApp({ config, database, logger: false, webRoot: path.join(dir, 'missing') });
  });
  after(async () => {
    await app.close();
    await bare.close();
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('GET / and any client path answer index.html, revalidated, with the client CSP', async () => {
    for (const url of ['/', '/notes/0b8f8e3a-1111-4222-8333-444455556666', '/trash', '/signup?next=1', '/index.html']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, INDEX, url);
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assert.equal(res.headers['cache-control'], 'no-cache', url);
      assert.equal(res.headers['content-security-policy'], CLIENT_CSP, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
    }
    const head = await app.inject({ method: 'HEAD', url: '/notes' });
    assert.equal(head.statusCode, 200);
  });

  test('the client CSP allows only same-origin scripts and styles, never inline or eval', () => {
    assert.match(CLIENT_CSP, /script-src 'self'(;|$)/);
    assert.match(CLIENT_CSP, /style-src 'self'(;|$)/);
    assert.match(CLIENT_CSP, /connect-src 'self'(;|$)/);
    assert.match(CLIENT_CSP, /frame-ancestors 'none'/);
    assert.doesNotMatch(CLIENT_CSP, /unsafe-|\*|https?:/);
  });

  test('a page loaded with ?remote-images=on lets images from other sites (http:, https:) load, and nothing else changes', async () => {
    assert.equal(
      CLIENT_CSP_REMOTE_IMAGES,
      CLIENT_CSP.replace("img-src 'self' data: blob:", "img-src 'self' data: blob: http: https:"),
    );
    assert.notEqual(CLIENT_CSP_REMOTE_IMAGES, CLIENT_CSP);
    for (const url of ['/notes/0b8f8e3a-1111-4222-8333-444455556666?remote-images=on', '/s/abc?x=1&remote-images=on']) {
      const res = await app.inject({ url });
      assert.equal(res.headers['content-security-policy'], CLIENT_CSP_REMOTE_IMAGES, url);
    }
    for (const url of ['/?remote-images=yes', '/?remote-images', '/remote-images=on', '/?Remote-Images=on']) {
      assert.equal((await app.inject({ url })).headers['content-security-policy'], CLIENT_CSP, url);
    }
  });

  test('hashed assets are immutable for a year; a missing asset is a 404, not HTML', async () => {
    const res = await app.inject({ url: '/assets/index-abc123.js' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'console.log(1)');
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    const missing = await app.inject({ url: '/assets/index-old999.js' });
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /^application\/problem\+json/);
  });

  test('compressed copies are sent when the browser accepts them, with Vary, the right type and the same bytes', async () => {
    const big = fs.readFileSync(path.join(dir, 'assets', 'big-abc123.js'), 'utf8');
    const br = await app.inject({
      url: '/assets/big-abc123.js',
      headers: { 'accept-encoding': 'gzip, deflate, br, zstd' },
    });
    assert.equal(br.statusCode, 200);
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers.vary), /accept-encoding/i);
    assert.match(String(br.headers['content-type']), /javascript/);
    assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(zlib.brotliDecompressSync(br.rawPayload).toString(), big);
    assert.ok(br.rawPayload.length < big.length / 5, `${br.rawPayload.length} bytes of ${big.length}`);

    const gz = await app.inject({ url: '/assets/big-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(gz.rawPayload).toString(), big);

    const plain = await app.inject({ url: '/assets/big-abc123.js', headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body, big);
    // A file without a compressed copy is sent as it is, whatever the browser accepts.
    const small = await app.inject({ url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.body, 'console.log(1)');
    // index.html for client paths, compressed too, keeping its own headers.
    const page = await app.inject({ url: '/notes', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(page.headers['content-encoding'], 'gzip');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(zlib.gunzipSync(page.rawPayload).toString(), INDEX);
  });

  test('top-level build files are served; nothing outside the build directory is', async () => {
    const icon = await app.inject({ url: '/favicon.svg' });
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['cache-control'], 'no-cache');
    for (const url of [
      '/../vellum-web-secret.txt',
      '/assets/../../vellum-web-secret.txt',
      '/assets/%2e%2e/%2e%2e/vellum-web-secret.txt',
      '/%2e%2e/vellum-web-secret.txt',
    ]) {
      const res = await app.inject({ url });
      assert.notEqual(res.body, 'secret', url);
      assert.ok(
        res.statusCode === 200 ? res.body === INDEX : res.statusCode >= 400 && res.statusCode < 500,
        `${url}: ${res.statusCode}`,
      );
    }
  });

  test('API, health and metrics paths keep their own answers', async () => {
    for (const url of ['/api', '/api/', '/api/nothing', '/api/notes/x/y/z', '/metrics/x', '/healthz/x']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 404, url);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/, url);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, url);
    }
    assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/api/notes' })).statusCode, 401);
  });

  test('without a build, client paths say how to build it', async () => {
    const res = await bare.inject({ url: '/' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.match(res.body, /npm run build/);
    assert.equal((await bare.inject({ url: '/api/nothing' })).statusCode, 404);
  });
});
