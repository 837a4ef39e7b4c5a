// node-pg: a target of the tuning set, built AFTER the connection-pool place rule to test it
// against a database downstream in Node.js.
//
// node:http serves `/`; the handler runs `SELECT pg_sleep(d)` through one node-postgres
// `Pool` at its defaults (pg-pool 3: `max` 10, connections opened on demand and kept idle for
// 10 s). One event loop: past 10 queries in flight the requests wait inside the pool, holding
// no thread and no socket. The hidden limit is 10 queries in flight: about 10 / d requests a
// second (100 at d = 0.1 s). Node's modules are read and closed, never mapped, so `/proc` shows
// no library to name the pool by: the place is unclear, and says the connections it saw.
//
// Usage: node server.js --port 0 --dsn postgresql://postgres@127.0.0.1:PORT/postgres [--sleep 0.1]
// The first stdout line is "listening on 127.0.0.1:PORT".
'use strict';
const http = require('node:http');
const { Pool } = require('pg');

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
};
const port = Number(flag('--port', '0'));
const dsn = flag('--dsn', null);
const sleep = Number(flag('--sleep', '0.1'));
if (!dsn) {
  console.error('--dsn URL is needed');
  process.exit(2);
}
const pool = new Pool({ connectionString: dsn }); // the defaults: max 10

const server = http.createServer(async (request, response) => {
  try {
    await pool.query('SELECT pg_sleep($1)', [sleep]);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('slept\n');
  } catch (err) {
    response.writeHead(502, { 'content-type': 'text/plain' });
    response.end(`database: ${err.message}\n`);
  }
});
server.listen(port, '127.0.0.1', 1024, () => {
  console.log(`listening on 127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  server.close();
  pool.end().finally(() => process.exit(0));
});
