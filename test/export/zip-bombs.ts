/**
 * Zips no honest tool writes, built by editing a real one's central directory (fflate writes the
 * base): the shape of a non-recursive zip bomb, where many directory records name one deflated block.
 */

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;

interface Directory {
  bytes: Buffer;
  eocd: number;
  offset: number;
  size: number;
  records: Buffer[];
}

function directoryOf(zip: Uint8Array): Directory {
  const bytes = Buffer.from(zip);
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd === -1 || bytes.readUInt32LE(eocd) !== EOCD) throw new Error('no end of central directory record');
  const count = bytes.readUInt16LE(eocd + 10);
  const size = bytes.readUInt32LE(eocd + 12);
  const offset = bytes.readUInt32LE(eocd + 16);
  const records: Buffer[] = [];
  for (let at = offset, i = 0; i < count; i += 1) {
    if (bytes.readUInt32LE(at) !== CENTRAL) throw new Error('bad central directory record');
    const length = 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
    records.push(Buffer.from(bytes.subarray(at, at + length)));
    at += length;
  }
  return { bytes, eocd, offset, size, records };
}

const nameOf = (record: Buffer) => record.toString('utf8', 46, 46 + record.readUInt16LE(28));

function rebuilt(d: Directory, records: Buffer[]): Buffer {
  const central = Buffer.concat(records);
  const eocd = Buffer.from(d.bytes.subarray(d.eocd, d.eocd + 22));
  eocd.writeUInt16LE(records.length, 8);
  eocd.writeUInt16LE(records.length, 10);
  eocd.writeUInt32LE(central.length, 12);
  eocd.writeUInt32LE(d.offset, 16);
  eocd.writeUInt16LE(0, 20);
  return Buffer.concat([d.bytes.subarray(0, d.offset), central, eocd]);
}

/** `zip` with one more directory record per name in `aliases`, each a copy of `target`'s (same local header, same bytes). */
export function withAliases(zip: Uint8Array, target: string, aliases: string[]): Buffer {
  const d = directoryOf(zip);
  const original = d.records.find((r) => nameOf(r) === target);
  if (original === undefined) throw new Error(`no entry ${target}`);
  const copies = aliases.map((alias) => {
    const name = Buffer.from(alias, 'utf8');
    const record = Buffer.concat([original.subarray(0, 46), name, original.subarray(46 + original.readUInt16LE(28))]);
    record.writeUInt16LE(name.length, 28);
    return record;
  });
  return rebuilt(d, [...d.records, ...copies]);
}

/** `zip` with `name`'s declared compressed size grown by `extra` bytes, so its data reaches past where the directory starts. */
export function reachingIntoDirectory(zip: Uint8Array, name: string, extra: number): Buffer {
  const d = directoryOf(zip);
  const records = d.records.map((r) => {
    if (nameOf(r) !== name) return r;
    const copy = Buffer.from(r);
    copy.writeUInt32LE(copy.readUInt32LE(20) + extra, 20);
    copy.writeUInt32LE(copy.readUInt32LE(24) + extra, 24);
    return copy;
  });
  return rebuilt(d, records);
}
