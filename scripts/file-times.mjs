// Loaded into every test process by scripts/test.mjs (NODE_OPTIONS=--import): at exit, a test
// file's process appends its wall time and CPU time (every thread of the process: its workers too;
// not the processes it spawns) to VELLUM_TEST_TIMES, one JSON line. The runner prints the slowest.
import fs from 'node:fs';

const file = process.env.VELLUM_TEST_TIMES;
const testFile = process.argv.slice(1).find((arg) => /\.test\.js$/.test(arg));
if (file && testFile) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    fs.appendFileSync(
      file,
      `${JSON.stringify({ file: testFile, wallS: performance.now() / 1000, cpuS: (user + system) / 1e6 })}\n`,
    );
  });
}
