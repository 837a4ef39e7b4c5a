// node-max-connections: a target of the tuning set (Node.js, no packages), built after Node's
// `server.maxConnections` was seen by hand to give a right size and no place (session 22), and
// with it the place rule for an accept path that sheds (`accept_cap_shed`): tuned on, not held
// out. `--workers N` (Node's cluster, built after the rule) spreads the cap over N processes.
//
// One event loop per process: every request makes an `http.get` to --downstream through one
// keep-alive `http.Agent` with no cap, and answers 200 when the downstream has. The server's
// `maxConnections` is --max-connections: Node's net.Server closes each connection it accepts
// past that many, unanswered (lib/net.js, onconnection). The hidden limit: N connections kept,
// so N calls in flight, N / d requests a second at a downstream delay d; every client past N
// has its connection closed at once, and reconnects to be closed again.
//
// With --workers W, the primary forks W workers that each listen with maxConnections N / W
// (Node's cluster: the primary accepts and hands each connection to a worker in turn; a worker
// at its cap closes it). The primary prints the line below once every worker listens.
//
// Usage: node server.js --port 0 --downstream URL --max-connections N [--workers W]
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';

const cluster = require('cluster');
const http = require('http');

function usage(problem) {
  process.stderr.write(
    `node-max-connections: ${problem} (usage: --port N --downstream URL --max-connections N [--workers W])\n`,
  );
  process.exit(2);
}

const options = { port: 0, downstream: null, maxConnections: null, workers: 0 };
const names = { '--port': 'port', '--max-connections': 'maxConnections', '--workers': 'workers' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const flag = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag in names) {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) usage(`${flag} must be a non-negative number, got ${value}`);
    options[names[flag]] = n;
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
if (options.maxConnections === null) usage('--max-connections is required');
if (options.maxConnections < 1) usage('--max-connections must be 1 or more, got 0');
if (options.workers && options.maxConnections % options.workers !== 0) {
  usage('--max-connections must be a multiple of --workers');
}

function serve(maxConnections, listening) {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    req.resume();
    http
      .get(options.downstream, { agent }, (answer) => {
        answer.resume();
        answer.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`downstream said ${answer.statusCode}\n`);
        });
      })
      .on('error', (e) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`downstream failed: ${e.message}\n`);
      });
  });
  server.keepAliveTimeout = 60000;
  server.maxConnections = maxConnections;
  server.listen(options.port, '127.0.0.1', () => listening(server.address().port));
}

const say = (port) => process.stdout.write(`listening on 127.0.0.1:${port}\n`);
if (!options.workers) {
  serve(options.maxConnections, say);
} else if (cluster.isPrimary) {
  let ready = 0;
  for (let i = 0; i < options.workers; i++) {
    cluster.fork().on('message', (port) => {
      ready += 1;
      if (ready === options.workers) say(port);
    });
  }
  // A worker that dies takes the service with it: the primary stops too, and its parent sees.
  cluster.on('exit', () => process.exit(1));
  process.on('SIGTERM', () => {
    for (const id in cluster.workers) cluster.workers[id].process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  serve(options.maxConnections / options.workers, (port) => process.send(port));
}
