// node-undici: a target of the tuning set, built after the connection-pool place rule and the
// node-agent target (Node.js, undici 7.30.2 from npm).
//
// One event loop: every request calls --downstream and answers 200 when the downstream has.
// With `--connections N`, through `new undici.Agent({ connections: N })` and `undici.request`,
// the setting services give undici: a Pool per origin that opens at most N connections and
// queues the rest of the calls in its own queue, holding no thread and no socket. Without it,
// through Node's global `fetch`, undici bundled in Node at its defaults: `connections` null, and
// a Pool adds a connection whenever none is free (nodejs/undici@7eb7c8ec8f23acd9c3da93a286162f8c1dc68326,
// lib/dispatcher/pool.js: `this[kConnections] = connections || null`, and `[kGetDispatcher]`
// adds a client while `!this[kConnections]`): no cap at all. The hidden limit with N: N calls
// in flight, N / d requests a second at a downstream delay d. Nothing in /proc names undici
// (Node's modules are read, never mapped; no pool thread runs it): the place must stay unclear,
// and no knob of another client (http.Agent's maxSockets) may be named.
//
// Usage: node server.js --port 0 --downstream URL [--connections N]
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';

const http = require('http');

function usage(problem) {
  process.stderr.write(`node-undici: ${problem} (usage: --port N --downstream URL [--connections N])\n`);
  process.exit(2);
}

const options = { port: 0, downstream: null, connections: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const flag = argv[i];
  const value = argv[i + 1];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === '--port' || flag === '--connections') {
    const n = Number(value);
    const least = flag === '--port' ? 0 : 1;
    if (!Number.isInteger(n) || n < least || n > 65535) {
      usage(`${flag} must be a whole number from ${least} to 65535, got ${value}`);
    }
    options[flag === '--port' ? 'port' : 'connections'] = n;
  } else if (flag === '--downstream') {
    try {
      options.downstream = new URL(value);
    } catch (e) {
      usage(`--downstream must be a URL, got ${value}`);
    }
    if (!['http:', 'https:'].includes(options.downstream.protocol)) {
      usage(`--downstream must be an http:// or https:// URL, got ${value}`);
    }
  } else {
    usage(`unknown argument ${flag}`);
  }
}
if (!options.downstream) usage('--downstream is required');

// One call to the downstream; resolves to its status.
let call;
if (options.connections) {
  let undici;
  try {
    undici = require('undici');
  } catch (e) {
    usage('undici is not installed: run npm ci in tests/targets/node-undici');
  }
  const agent = new undici.Agent({ connections: options.connections });
  call = async () => {
    const answer = await undici.request(options.downstream, { dispatcher: agent });
    await answer.body.dump();
    return answer.statusCode;
  };
} else {
  call = async () => {
    const answer = await fetch(options.downstream);
    await answer.arrayBuffer();
    return answer.status;
  };
}

const server = http.createServer((req, res) => {
  req.resume();
  call().then(
    (status) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`downstream said ${status}\n`);
    },
    (e) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`downstream failed: ${e.message}\n`);
    },
  );
});
server.on('error', (e) => usage(`cannot listen on 127.0.0.1:${options.port}: ${e.message}`));
server.listen(options.port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});
