// node-dns-lookup: a target built after the rules and the libuv catalogue entry (Node.js, no
// packages), to see whether chokepoint finds a pool it was not tuned on.
//
// One event loop: every request makes an `http.get` to --downstream, a URL whose host is a name
// (not an address), on a new connection (`agent: false`, as a client that closes its
// connections). Node resolves the name for each connection with `dns.lookup`, which calls the
// C library's getaddrinfo on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says
// otherwise; Node's doc/api/dns.md, "Implementation considerations"). Behind a resolver that
// takes d to answer, at most 4 lookups run at once: the hidden limit is 4 threads each held d,
// 4 / d requests a second, whatever the downstream's delay. run.sh starts it with its own
// resolver (dns.py) in a private mount namespace.
//
// Usage: node server.js --port 0 --downstream http://NAME:PORT/
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';

const http = require('http');

function usage(problem) {
  process.stderr.write(`node-dns-lookup: ${problem} (usage: --port N --downstream URL)\n`);
  process.exit(2);
}

const options = { port: 0, downstream: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const flag = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--port') {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) usage(`--port must be a non-negative number, got ${value}`);
    options.port = n;
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

const server = http.createServer((req, res) => {
  req.resume();
  http
    .get(options.downstream, { agent: false }, (answer) => {
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
server.listen(options.port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});
