// node-agent: a target of the tuning set, built after the connection-pool place rule (Node.js,
// no packages).
//
// One event loop: every request makes an `http.get` to --downstream through one `http.Agent`
// and answers 200 when the downstream has. With `--max-sockets N` the agent is
// `new http.Agent({ keepAlive: true, maxSockets: N })`, the setting services give it: past N
// calls in flight to the downstream, the agent queues the rest (`agent.requests`), holding no
// thread and no socket. Without it, Node's `http.globalAgent` at its defaults, whose
// `maxSockets` is Infinity: no cap at all. The hidden limit with N: N calls in flight, N / d
// requests a second at a downstream delay d. Nothing in /proc names the agent (Node's modules
// are read, never mapped; no pool thread runs it): the place must stay unclear.
//
// Usage: node server.js --port 0 --downstream URL [--max-sockets N]
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';

const http = require('http');

function usage(problem) {
  process.stderr.write(`node-agent: ${problem} (usage: --port N --downstream URL [--max-sockets N])\n`);
  process.exit(2);
}

const options = { port: 0, downstream: null, maxSockets: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const flag = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--port' || flag === '--max-sockets') {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) usage(`${flag} must be a non-negative number, got ${value}`);
    options[flag === '--port' ? 'port' : 'maxSockets'] = n;
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

const agent = options.maxSockets
  ? new http.Agent({ keepAlive: true, maxSockets: options.maxSockets })
  : http.globalAgent;

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
server.listen(options.port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});
