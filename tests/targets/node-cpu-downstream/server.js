// node-cpu-downstream: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these) (Node.js, no packages).
//
// One event loop: every request burns about 5 ms of CPU on it (a calibrated loop; nothing else
// runs meanwhile), then makes a kept-alive `http.get` to --downstream and answers 200 when the
// downstream has answered. The downstream calls overlap freely (no pool: the agent keeps up to
// 256 sockets), so the only limit is the one core the event loop runs on: about 1000 / 5 =
// 200 req/s. A mock with a fixed delay D then sees a flat ceiling of about 200 × D calls in
// flight — a consequence of the CPU limit, not a pool. Kind cpu-bound, one core.
//
// Usage: node server.js --port 0 --downstream URL [--work-ms 5]
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';

const http = require('http');

function usage(problem) {
  process.stderr.write(`node-cpu-downstream: ${problem} (usage: --port N --downstream URL [--work-ms MS])\n`);
  process.exit(2);
}

const options = { port: 0, downstream: null, workMs: 5 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const flag = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--port' || flag === '--work-ms') {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) usage(`${flag} must be a non-negative number, got ${value}`);
    options[flag === '--port' ? 'port' : 'workMs'] = n;
  } else if (flag === '--downstream') {
    try {
      options.downstream = new URL(value);
    } catch (e) {
      usage(`--downstream must be a URL, got ${value}`);
    }
  } else {
    usage(`unknown argument ${flag}`);
  }
}
if (!options.downstream) usage('--downstream is required');

// Rounds of `spin` per millisecond of CPU, the fastest of several trials (a busy machine can
// only slow a trial down).
function spin(rounds) {
  let x = 1;
  for (let i = 0; i < rounds; i++) x = (x * 1103515245 + 12345) % 2147483648;
  return x;
}
function calibrate() {
  const rounds = 200000;
  let best = Infinity;
  for (let trial = 0; trial < 7; trial++) {
    const start = process.cpuUsage();
    spin(rounds);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return rounds / Math.max(best, 0.01);
}
const workRounds = Math.round(calibrate() * options.workMs);

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const checksum = spin(workRounds);
    const call = http.get(options.downstream, { agent }, (down) => {
      down.resume();
      down.on('end', () => {
        res.writeHead(down.statusCode === 200 ? 200 : 502, { 'Content-Type': 'text/plain' });
        res.end(`ok ${checksum & 1}\n`);
      });
    });
    call.on('error', (error) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`downstream: ${error.message}\n`);
    });
  });
});
server.keepAliveTimeout = 60000;
server.listen(options.port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});
