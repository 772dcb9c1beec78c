#!/usr/bin/env node
// Lists every image the deployment pulls (Dockerfile FROM lines, compose.yaml `image:` entries) and
// whether it is pinned by digest (`name:tag@sha256:<64 hex>`). `--require-digests` exits 1 while
// any is not: run it in the CI of a deployment after pinning (docs/deployment.md, "Images").
// Images built here (compose's `vellum:local`, a build stage named in FROM) are not pulled.
import fs from 'node:fs';
import path from 'node:path';

const DIGEST = /@sha256:[0-9a-f]{64}$/;

/** `[{file, line, image, pinned}]` for the given files (paths relative to `root`). */
export function imageReferences(root, files = ['Dockerfile', 'compose.yaml']) {
  const found = [];
  for (const file of files) {
    const full = path.join(root, file);
    if (!fs.existsSync(full)) continue;
    const lines = fs.readFileSync(full, 'utf8').split('\n');
    const stages = new Set();
    lines.forEach((text, i) => {
      const from = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(text);
      const image = /^\s*image:\s*["']?([^"'\s#]+)/.exec(text);
      const ref = from?.[1] ?? image?.[1];
      if (from?.[2] !== undefined) stages.add(from[2].toLowerCase());
      if (ref === undefined || stages.has(ref.toLowerCase()) || ref === 'scratch' || ref.endsWith(':local')) return;
      found.push({ file, line: i + 1, image: ref, pinned: DIGEST.test(ref) });
    });
  }
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const refs = imageReferences(root);
  for (const r of refs) process.stdout.write(`${r.pinned ? 'pinned  ' : 'floating'} ${r.file}:${r.line} ${r.image}\n`);
  const floating = refs.filter((r) => !r.pinned);
  if (process.argv.includes('--require-digests') && floating.length > 0) {
    process.stderr.write(
      `${floating.length} image(s) not pinned by digest: docker buildx imagetools inspect <image> gives it; write <image>@sha256:<digest>\n`,
    );
    process.exitCode = 1;
  }
}
