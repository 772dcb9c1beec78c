// Draws the app's PNG icons (the favicon's blue square and white V) for the web manifest:
// `node scripts/make-icons.mjs` writes web/public/*.png (top-level files: the service serves those). No image library: PNG is zlib-
// compressed rows of RGBA pixels behind a signature and CRC-checked chunks.
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

const BLUE = [0x3b, 0x5b, 0xdb];
const WHITE = [0xff, 0xff, 0xff];

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** Distance from point p to segment ab. */
function distance(px, py, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** The icon at `size` pixels; `maskable`: full bleed, the V inside the safe zone (80 %). */
function icon(size, maskable) {
  const rows = [];
  const u = size / 32;
  const scale = maskable ? 0.7 : 1;
  const c = size / 2;
  const p = (x, y) => [c + (x * u - c) * scale, c + (y * u - c) * scale];
  const [ax, ay] = p(9, 8);
  const [bx, by] = p(16, 25);
  const [cx, cy] = p(23, 8);
  const half = 1.75 * u * scale;
  const radius = maskable ? 0 : 6 * u;
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      // Rounded corners: outside the corner circle is transparent.
      const qx = Math.max(radius - px, px - (size - radius), 0);
      const qy = Math.max(radius - py, py - (size - radius), 0);
      const inside = radius === 0 || Math.hypot(qx, qy) <= radius;
      const onV = Math.min(distance(px, py, ax, ay, bx, by), distance(px, py, bx, by, cx, cy)) <= half;
      const colour = onV ? WHITE : BLUE;
      row.set([...colour, inside ? 255 : 0], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const out = path.resolve(import.meta.dirname, '../web/public');
fs.mkdirSync(out, { recursive: true });
for (const [name, size, maskable] of [
  ['icon-192.png', 192, false],
  ['icon-512.png', 512, false],
  ['maskable-512.png', 512, true],
  ['apple-touch-icon.png', 180, true],
]) {
  fs.writeFileSync(path.join(out, name), icon(size, maskable));
}
