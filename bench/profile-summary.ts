// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): self time by function and by
// where the code lives (a package under node_modules, a file of src/, or Node's internals).
//   npx tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile [top]
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
/** Busy time only: the profile also spans the idle stretches between scenarios. */
const total = [...selfUs].filter(([id]) => !idleIds.has(id)).reduce((a, [, us]) => a + us, 0);
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function where(url: string): string {
  if (url === '') return '(native/V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  if (url.startsWith('node:')) return 'node: internals';
  const src = /\/(dist|src|bench)\/(.*)$/.exec(url);
  return src !== null ? `${src[1]}/${src[2]}` : url;
}

const fns = new Map<string, number>();
const places = new Map<string, number>();
const inclusive = new Map<string, number>();
const inclusivePlaces = new Map<string, number>();
const keyOf = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'}  ${where(url)}${url === '' ? '' : `:${lineNumber + 1}`}`;
};
for (const [id, us] of selfUs) {
  if (idleIds.has(id)) continue;
  const node = byId.get(id)!;
  const key = keyOf(node);
  fns.set(key, (fns.get(key) ?? 0) + us);
  const place = where(node.callFrame.url);
  places.set(place, (places.get(place) ?? 0) + us);
  // Inclusive: every distinct function on this sample's stack gets the time once.
  const seen = new Set<string>();
  const seenPlaces = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!;
    const k = keyOf(frame);
    if (!seen.has(k)) {
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
    const p = where(frame.callFrame.url);
    if (!seenPlaces.has(p)) {
      seenPlaces.add(p);
      inclusivePlaces.set(p, (inclusivePlaces.get(p) ?? 0) + us);
    }
  }
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${pct(us)}  ${key}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s busy (idle excluded; percentages are of busy time)\n`);
print('Self time by place', places);
print('Inclusive time by place (time with that code on the stack)', inclusivePlaces);
print('Self time by function', fns);
print('Inclusive time by function', inclusive);
