import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Plugin } from 'vite';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Text the browser downloads; images and fonts of the build are already compressed. */
const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|webmanifest|txt|map)$/;
/** Below this a compressed copy saves less than its headers cost. */
const MIN_BYTES = 1024;

/**
 * Writes a .br and a .gz beside every compressible file of the build, once, at the highest
 * settings (the service serves them as they are: src/web/web.routes.ts, preCompressed), and only
 * when the copy is smaller. Compressing at build time costs the server no CPU per request.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'vellum-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const files = fs
        .readdirSync(outDir, { recursive: true, withFileTypes: true })
        .filter(
          (entry) => entry.isFile() && COMPRESSIBLE.test(entry.name) && !entry.parentPath.includes(`${path.sep}.`),
        )
        .map((entry) => path.join(entry.parentPath, entry.name));
      await Promise.all(
        files.map(async (file) => {
          const bytes = fs.readFileSync(file);
          if (bytes.length < MIN_BYTES) return;
          const [br, gz] = await Promise.all([
            brotli(bytes, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
              },
            }),
            gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }),
          ]);
          if (br.length < bytes.length) fs.writeFileSync(`${file}.br`, br);
          if (gz.length < bytes.length) fs.writeFileSync(`${file}.gz`, gz);
        }),
      );
    },
  };
}
