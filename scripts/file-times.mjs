// Loaded into every test process by scripts/test.mjs (NODE_OPTIONS=--import): at exit, a test
// file's process appends its wall time and CPU time (every thread of the process: its workers too)
// to VELLUM_TEST_TIMES, one JSON line, with the CPU time of the processes it spawned and waited for
// (servers, CLIs, tsc: the kernel's cutime/cstime), which process.cpuUsage() does not see. The
// runner prints the slowest.
import fs from 'node:fs';

const file = process.env.VELLUM_TEST_TIMES;
const testFile = process.argv.slice(1).find((arg) => /\.test\.js$/.test(arg));

/** CPU seconds of the waited-for children (Linux /proc; 0 elsewhere). */
function childrenCpuS() {
  try {
    // Fields after the command name's closing parenthesis; cutime and cstime are the 16th and 17th
    // fields of the line, i.e. the 14th and 15th after it.
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

if (file && testFile) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    fs.appendFileSync(
      file,
      `${JSON.stringify({ file: testFile, wallS: performance.now() / 1000, cpuS: (user + system) / 1e6, childCpuS: childrenCpuS() })}\n`,
    );
  });
}
