// Renders one run as Markdown and writes it into its own marked section of BENCHMARKS.md, leaving
// the hand-written parts of that file alone.
import fs from 'node:fs';

interface Row {
  title: string;
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  responseBytes: number;
  unexpectedStatuses: number;
  statusCodes: Record<string, number>;
  baseline?: { requestsPerSec: number; latencyP50Ms: number; latencyP99Ms: number; serverCpuMsPerRequest?: number };
  ratio?: number;
  serverCpuMsPerRequest?: number;
  cpuRatio?: number;
  otherCores?: number;
}

interface StormSide {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

export interface Report {
  db: string;
  database: string;
  date: string;
  label: string | null;
  command: string;
  commit: string;
  node: string;
  machine: { cores: number; cpu: string; memoryGiB: number };
  settings: {
    duration: number;
    warmup: number;
    connections: number;
    stormConnections: number;
    history: number;
    noteContentBytes: number;
    serverLogLevel: string;
  };
  scenarios?: unknown;
  loginStorm?: unknown;
  loginStormPaced?: unknown;
  memory?: unknown;
  workers?: unknown;
  targets: Array<{ name: string; goal: string; value: string; met: boolean }>;
  wallSeconds: number;
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function renderMarkdown(report: Report, resultFile: string): string {
  const s = report.settings;
  const lines: string[] = [];
  const dbName = report.db === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  lines.push(`### ${dbName} — ${report.date.slice(0, 10)}`, '');
  lines.push(
    `- Command: \`${report.command}\` (commit \`${report.commit}\`${report.label === null ? '' : `, label "${report.label}"`}); raw figures: [\`${resultFile}\`](${resultFile})`,
    `- Node ${report.node}; ${report.machine.cores} cores (${report.machine.cpu}), ${report.machine.memoryGiB} GiB; ${report.database}`,
    `- autocannon, ${s.connections} connections, ${s.warmup} s warm-up + ${s.duration} s measured per scenario; server \`LOG_LEVEL=${s.serverLogLevel}\` to a file, \`RATE_LIMIT=off\`, \`PWNED_PASSWORDS_URL=off\`, \`NODE_ENV=production\`, 1 worker`,
    `- **The load generator, the server and the baseline share the same ${report.machine.cores} cores**: absolute req/s are lower than on a machine where the client runs elsewhere; the ratios are the figures to compare.`,
    '',
  );
  const rows = (report.scenarios ?? []) as Row[];
  lines.push(
    '| Scenario | req/s | p50 ms | p99 ms | body B | baseline req/s | **ratio to baseline** | server CPU ms/req (baseline) | CPU ratio | other load, cores | non-expected statuses |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const pct = (r: number | undefined) => (r === undefined ? '–' : `${(r * 100).toFixed(1)}%`);
  for (const r of rows) {
    const cpu =
      r.serverCpuMsPerRequest === undefined
        ? '–'
        : `${r.serverCpuMsPerRequest.toFixed(3)} (${r.baseline?.serverCpuMsPerRequest?.toFixed(3) ?? '–'})`;
    lines.push(
      `| ${r.title} | ${fmt(r.requestsPerSec)} | ${r.latencyP50Ms} | ${r.latencyP99Ms} | ${fmt(r.responseBytes)} | ${r.baseline === undefined ? '–' : fmt(r.baseline.requestsPerSec)} | **${pct(r.ratio)}** | ${cpu} | ${pct(r.cpuRatio)} | ${r.otherCores ?? '–'} | ${r.unexpectedStatuses} |`,
    );
  }
  lines.push(
    '',
    '"CPU ratio" is the baseline\'s server CPU per request over Vellum\'s: the req/s ratio the two would have if each had a core to itself. "Other load" is CPU used meanwhile by other processes (PostgreSQL itself, on the PostgreSQL runs).',
    '',
  );

  type Storm = {
    alone: StormSide;
    underStorm: StormSide;
    p99Ratio: number;
    login: {
      connections: number;
      rate: number | string;
      requestsPerSec: number;
      accepted: number;
      shed503: number;
      statusCodes: Record<string, number>;
      retryAfterOn503: boolean;
    };
  };
  const storms = [
    ['Login storm, flood', report.loginStorm],
    ['Login storm, paced', report.loginStormPaced],
  ] as Array<[string, Storm | undefined]>;
  for (const [name, storm] of storms) {
    if (storm === undefined) continue;
    const rate = typeof storm.login.rate === 'number' ? `${storm.login.rate} logins/s in all` : 'as fast as answered';
    lines.push(
      `${name} (${storm.login.connections} connections on POST /api/auth/login, ${rate}, from a separate autocannon process, alongside ${s.connections} connections on GET /api/notes/{id}):`,
      '',
    );
    lines.push('| GET /api/notes/{id} | req/s | p50 ms | p99 ms |', '|---|---:|---:|---:|');
    lines.push(
      `| alone (half before, half after the storm) | ${fmt(storm.alone.requestsPerSec)} | ${storm.alone.latencyP50Ms} | ${storm.alone.latencyP99Ms} |`,
    );
    lines.push(
      `| during the storm | ${fmt(storm.underStorm.requestsPerSec)} | ${storm.underStorm.latencyP50Ms} | ${storm.underStorm.latencyP99Ms} |`,
    );
    lines.push('');
    lines.push(
      `p99 ratio **${storm.p99Ratio}x**. Logins during the storm: ${fmt(storm.login.requestsPerSec)} responses/s; ${fmt(storm.login.accepted)} accepted (200), ` +
        `${fmt(storm.login.shed503)} shed with 503 (statuses ${JSON.stringify(storm.login.statusCodes)}); Retry-After on every probed 503: ${storm.login.retryAfterOn503 ? 'yes' : 'no'}.`,
      '',
    );
  }

  const memory = report.memory as { peakRssMb: number } | undefined;
  if (memory !== undefined)
    lines.push(`Server peak RSS (VmHWM, whole run including seeding): **${memory.peakRssMb} MB**.`, '');

  const workers = report.workers as
    | {
        workers: number;
        one: StormSide | null;
        many: StormSide & { non2xx: number };
        speedup: number | null;
        peakRssMbTotal: number;
      }
    | undefined;
  if (workers !== undefined) {
    lines.push(
      `\`WORKERS\` (GET /api/notes/{id}):`,
      '',
      '| WORKERS | req/s | p50 ms | p99 ms |',
      '|---:|---:|---:|---:|',
    );
    if (workers.one !== null)
      lines.push(
        `| 1 | ${fmt(workers.one.requestsPerSec)} | ${workers.one.latencyP50Ms} | ${workers.one.latencyP99Ms} |`,
      );
    lines.push(
      `| ${workers.workers} | ${fmt(workers.many.requestsPerSec)} | ${workers.many.latencyP50Ms} | ${workers.many.latencyP99Ms} |`,
      '',
    );
    lines.push(
      `Speed-up ${workers.speedup ?? '–'}x; all ${workers.workers + 1} processes together peaked at ${workers.peakRssMbTotal} MB RSS.`,
      '',
    );
  }

  lines.push('| Target | goal | measured | |', '|---|---|---|---|');
  for (const t of report.targets)
    lines.push(`| ${t.name} | ${t.goal} | ${t.value} | ${t.met ? 'met' : '**missed**'} |`);
  lines.push('', `Run time ${report.wallSeconds} s.`);
  return lines.join('\n');
}

export function updateBenchmarksMd(file: string, db: string, section: string): void {
  const begin = `<!-- bench:${db}:begin (generated by npm run bench; edits inside are overwritten) -->`;
  const end = `<!-- bench:${db}:end -->`;
  const block = `${begin}\n${section}\n${end}`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n\n## Results\n\n';
  const start = text.indexOf(`<!-- bench:${db}:begin`);
  const stop = text.indexOf(end);
  if (start !== -1 && stop !== -1) text = text.slice(0, start) + block + text.slice(stop + end.length);
  else text = `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}
