#!/usr/bin/env node
// A raw JSON-RPC MCP client (no SDK, so its own cost per call stays small)
// for the `vouch wrap` latency benchmark: run it once against
// fast-server.mjs directly and once through the wrapper, and compare.
//
//   node bench-client.mjs --calls N [--concurrency C] [--warmup W]
//                         [--text S] [--timeout-ms T] -- COMMAND ARGS...
//
// Spawns COMMAND (our environment, stderr inherited), sends initialize
// (2025-11-25), notifications/initialized and tools/list, then W warm-up
// calls and N timed calls of tools/call echo {"text": S (default "hello")},
// keeping C requests in flight (C = 1: strictly sequential). Each round trip
// is timed with process.hrtime.bigint() from just before the request is
// written to when its response line is parsed. A server→client request is
// answered -32601; notifications are ignored. At the end it closes the
// child's stdin and waits for it to exit (SIGTERM after 5 s, SIGKILL 2 s later).
//
// Output (one line on stdout): {"calls","concurrency","warmup","errors",
// "p50_us","p90_us","p99_us","max_us","min_us","mean_us","wall_s",
// "calls_per_s","exit_code","exit_signal"}; percentiles are nearest-rank
// over the N timed calls, wall_s covers the N timed calls only. "errors"
// counts responses that were JSON-RPC errors or isError results, or did not
// echo the text. A failure that stops the run (spawn error, child exit, a
// request past --timeout-ms, default 10000) adds "error" and leaves the
// numbers it could not measure null. Exit status 0 (2 for a bad command line).
import { spawn } from 'node:child_process';

function usage(msg) {
  if (msg) process.stderr.write(`bench-client: ${msg}\n`);
  process.stderr.write('usage: node bench-client.mjs --calls N [--concurrency C] [--warmup W] [--text S] [--timeout-ms T] -- COMMAND ARGS...\n');
  process.exit(2);
}

const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
if (dd < 0 || dd === argv.length - 1) usage('missing -- COMMAND');
const opts = { calls: null, concurrency: 1, warmup: 0, text: 'hello', 'timeout-ms': 10000 };
for (let i = 0; i < dd; i += 2) {
  const key = argv[i]?.replace(/^--/, '');
  if (!(key in opts) || i + 1 >= dd) usage(`bad option ${argv[i]}`);
  opts[key] = key === 'text' ? argv[i + 1] : Number(argv[i + 1]);
}
const N = opts.calls;
const C = opts.concurrency;
const W = opts.warmup;
const TIMEOUT_MS = opts['timeout-ms'];
for (const [k, v, min] of [['calls', N, 1], ['concurrency', C, 1], ['warmup', W, 0], ['timeout-ms', TIMEOUT_MS, 1]]) {
  if (!Number.isInteger(v) || v < min) usage(`--${k} must be an integer ≥ ${min}`);
}
const command = argv[dd + 1];
const args = argv.slice(dd + 2);

const output = {
  calls: N,
  concurrency: C,
  warmup: W,
  errors: 0,
  p50_us: null,
  p90_us: null,
  p99_us: null,
  max_us: null,
  min_us: null,
  mean_us: null,
  wall_s: null,
  calls_per_s: null,
  exit_code: null,
  exit_signal: null,
};

const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
let fatal = null; // set once: the run cannot go on
const pending = new Map(); // id → {resolve, reject, timer}
let nextId = 0;

function fail(message) {
  if (fatal) return;
  fatal = new Error(message);
  for (const p of pending.values()) {
    clearTimeout(p.timer);
    p.reject(fatal);
  }
  pending.clear();
}

let spawnFailed = false;
const exited = new Promise((resolve) => {
  child.on('exit', (code, signal) => {
    output.exit_code = code;
    output.exit_signal = signal;
    fail(`child exited (code ${code}, signal ${signal})`);
    resolve();
  });
  child.on('error', (e) => {
    // A failed spawn emits no 'exit'.
    if (child.pid === undefined) {
      spawnFailed = true;
      resolve();
    }
    fail(`spawn failed: ${e.message}`);
  });
});
child.stdin.on('error', (e) => fail(`writing to the child failed: ${e.message}`));

function onLine(line, t1) {
  if (line === '' || line === '\r') return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    process.stderr.write(`bench-client: not JSON from the server: ${line.slice(0, 200)}\n`);
    return;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return;
  if (typeof msg.method === 'string') {
    if (msg.id !== undefined) {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }) + '\n');
    }
    return;
  }
  const p = pending.get(msg.id);
  if (!p) {
    process.stderr.write(`bench-client: response to an unknown id: ${line.slice(0, 200)}\n`);
    return;
  }
  pending.delete(msg.id);
  clearTimeout(p.timer);
  p.resolve({ msg, rttNs: t1 - p.t0 });
}

let buf = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  const t1 = process.hrtime.bigint();
  buf += chunk;
  let start = 0;
  let nl;
  while ((nl = buf.indexOf('\n', start)) >= 0) {
    onLine(buf.slice(start, nl), t1);
    start = nl + 1;
  }
  if (start) buf = buf.slice(start);
});

/** Sends a request; resolves with {msg, rttNs}. */
function request(method, params) {
  if (fatal) return Promise.reject(fatal);
  const id = nextId++;
  const line = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      fail(`${method} id ${id} got no answer within ${TIMEOUT_MS} ms`);
      reject(fatal);
    }, TIMEOUT_MS);
    const entry = { resolve, reject, timer, t0: 0n };
    pending.set(id, entry);
    entry.t0 = process.hrtime.bigint();
    child.stdin.write(line);
  });
}

const CALL_PARAMS = { name: 'echo', arguments: { text: opts.text } };
function callFailed(msg) {
  if (msg.error) return true;
  const r = msg.result;
  return !r || r.isError === true || r.content?.[0]?.text !== opts.text;
}

/** Runs `count` echo calls with C in flight; returns the round trips in ns. */
async function run(count) {
  const rtts = [];
  let issued = 0;
  async function worker() {
    while (issued < count && !fatal) {
      issued += 1;
      const { msg, rttNs } = await request('tools/call', CALL_PARAMS);
      if (callFailed(msg)) output.errors += 1;
      rtts.push(rttNs);
    }
  }
  await Promise.all(Array.from({ length: Math.min(C, count) }, worker));
  return rtts;
}

const us = (ns) => Math.round(Number(ns) / 100) / 10; // ns → µs, one decimal

try {
  const init = await request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'vouch-bench-client', version: '1.0.0' },
  });
  if (init.msg.error) throw new Error(`initialize failed: ${JSON.stringify(init.msg.error)}`);
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const list = await request('tools/list', {});
  if (!list.msg.result?.tools?.some((t) => t.name === 'echo')) throw new Error(`tools/list has no echo: ${JSON.stringify(list.msg).slice(0, 200)}`);
  if (W > 0) {
    await run(W);
    output.errors = 0;
  }
  const t0 = process.hrtime.bigint();
  const rtts = await run(N);
  const wallNs = process.hrtime.bigint() - t0;
  rtts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = (p) => rtts[Math.max(0, Math.ceil(p * rtts.length) - 1)];
  const sum = rtts.reduce((a, b) => a + b, 0n);
  Object.assign(output, {
    p50_us: us(rank(0.5)),
    p90_us: us(rank(0.9)),
    p99_us: us(rank(0.99)),
    max_us: us(rtts[rtts.length - 1]),
    min_us: us(rtts[0]),
    mean_us: us(sum / BigInt(rtts.length)),
    wall_s: Math.round(Number(wallNs) / 1e3) / 1e6,
    calls_per_s: Math.round((N / (Number(wallNs) / 1e9)) * 10) / 10,
  });
} catch (e) {
  output.error = e.message;
  process.stderr.write(`bench-client: ${e.message}\n`);
}

// Close stdin and wait for the child to go; escalate if it does not.
if (!spawnFailed && output.exit_code === null && output.exit_signal === null) {
  child.stdin.end();
  const term = setTimeout(() => child.kill('SIGTERM'), 5000);
  const kill = setTimeout(() => child.kill('SIGKILL'), 7000);
  await exited;
  clearTimeout(term);
  clearTimeout(kill);
}
process.stdout.write(JSON.stringify(output) + '\n', () => process.exit(0));
