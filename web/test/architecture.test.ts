// The web client's shape (issue #38), read from its source: it stands alone from the server's code,
// and only the API modules talk to the network (web/src/api/, the shared client and session, and one
// `api.ts` per feature folder); components call the named functions those export.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const WEB = path.resolve(import.meta.dirname, '..');
const SRC = path.join(WEB, 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

const files = sources(SRC).map((file) => ({
  file,
  name: path.relative(WEB, file),
  text: fs.readFileSync(file, 'utf8'),
}));

/** Every module specifier a file imports or re-exports, statically or dynamically. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm))
    found.push(match[2]!);
  return found;
}

/** The API layer: the shared client, session and live events, and each feature's api.ts. */
const isApiModule = (file: string) => path.dirname(file) === path.join(SRC, 'api') || path.basename(file) === 'api.ts';

describe('web/src', () => {
  it('finds the web client', () => {
    assert.ok(files.length > 20);
    assert.ok(files.some((f) => f.name === path.join('src', 'notes', 'editor.tsx')));
  });

  it("imports nothing from the server (src/): whatever both need is the web client's own or comes from the API", () => {
    const offending = files.flatMap(({ file, name, text }) =>
      specifiers(text)
        .filter((s) => s.startsWith('.') && !path.resolve(path.dirname(file), s).startsWith(SRC + path.sep))
        .map((s) => `${name} imports ${s}`),
    );
    assert.deepEqual(offending, []);
  });

  it('calls the API only through api modules: no fetch, XMLHttpRequest or API client anywhere else', () => {
    const offending = files
      .filter(({ file }) => !isApiModule(file))
      .flatMap(({ name, text }) => {
        const found: string[] = [];
        if (/(?<![\w.])fetch\s*\(/.test(text)) found.push(`${name} calls fetch`);
        if (/\bXMLHttpRequest\b/.test(text)) found.push(`${name} uses XMLHttpRequest`);
        if (/\bapi\.(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b/.test(text)) found.push(`${name} calls the API client`);
        for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*['"][./]*(?:api\/)?client['"]/g)) {
          const values = match[1]!
            .split(',')
            .map((n) => n.trim())
            .filter((n) => n !== '' && !n.startsWith('type '));
          for (const forbidden of ['api', 'raw', 'session'])
            if (values.includes(forbidden)) found.push(`${name} imports ${forbidden} from the API client`);
        }
        return found;
      });
    assert.deepEqual(offending, []);
  });
});
