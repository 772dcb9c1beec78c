import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import semver from 'semver';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

// `npm ci` warns EBADENGINE for every installed package whose engines exclude the running Node.
test('every locked package supports the oldest Node.js that package.json promises (no EBADENGINE from npm ci)', () => {
  const promised = (read('package.json').engines as { node: string }).node;
  const oldest = semver.minVersion(promised)!;
  assert.equal(oldest.major, 20, `engines.node is ${promised}`);
  const floor = oldest.version;
  const packages = read('package-lock.json').packages as Record<
    string,
    { version?: string; engines?: { node?: string } | string[] }
  >;
  const refused = Object.entries(packages)
    .filter(([name, meta]) => name !== '' && !Array.isArray(meta.engines) && meta.engines?.node !== undefined)
    .filter(
      ([, meta]) =>
        !semver.satisfies(floor, (meta.engines as { node: string }).node) ||
        !semver.satisfies(process.version, (meta.engines as { node: string }).node),
    )
    .map(([name, meta]) => `${name}@${meta.version} wants node ${(meta.engines as { node: string }).node}`);
  assert.deepEqual(refused, []);
});
