/**
 * Paired HTTP bursts, for looking into what a route costs: `node bench/http/pair.mjs <cycles>
 * <burstMs> <framework:variant>...` (build first; Linux, as it reads `/proc` and pins with
 * `taskset`). Example: `node bench/http/pair.mjs 24 400 express:none express:paygate`.
 *
 * Every variant's server (bench/http/server.mjs) runs at once, pinned to CPU 1, idle unless driven.
 * This process, pinned to CPU 0, drives one server at a time for `burstMs` over 16 keep-alive
 * connections (100 tokens reused in turn), each server once per cycle, in alternating order, after
 * the machine has been idle for a moment. A slow spell of the machine then touches every variant
 * alike. Prints, per variant, the median (and interquartile range) of its burst rate over the first
 * variant's in the same cycle, and the server's CPU time per request (from `/proc/<pid>/stat`),
 * which counts every thread of the server and no waiting.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { serveJwks } from 'paygate-auth/testing';
import { median } from '../lib/statistics.mjs';
import { createBenchKey, flat, signMany } from '../lib/tokens.mjs';
import { startServer, stopServer } from './run-http.mjs';

const PATH = '/payments/ping';
const CONNECTIONS = 16;
const TOKENS = 100;
/** Clock ticks a second in `/proc` (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

const [cyclesArg, burstArg, ...ids] = process.argv.slice(2);
const cycles = Number(cyclesArg);
const burstMs = Number(burstArg);
if (!Number.isInteger(cycles) || cycles < 1 || !(burstMs >= 50) || ids.length === 0 || !ids.every((id) => /^(express|fastify):[a-z-]+$/.test(id))) {
  console.error('usage: node bench/http/pair.mjs <cycles> <burstMs ≥ 50> <express|fastify>:<variant>...');
  process.exit(2);
}

/** CPU ticks (user + system, every thread) that process `pid` has used. */
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Busy ticks of the whole machine. */
function machineBusyTicks() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return user + nice + system + irq + softirq + steal;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (up to three minutes) until the machine was nearly idle for 300 ms. */
async function machineIdle() {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const before = machineBusyTicks();
    await sleep(300);
    if (machineBusyTicks() - before <= 3) return;
  }
}

/**
 * One keep-alive connection that, while started, sends the next request as soon as the previous
 * answer is in, and counts answers in `counter`. Anything but a 200 aborts the run.
 */
function connection(port, requests, counter) {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const connected = once(socket, 'connect');
  let pending = Buffer.alloc(0);
  let next = Math.floor(Math.random() * requests.length);
  let active = false;
  const send = () => {
    socket.write(requests[next]);
    next = (next + 1) % requests.length;
  };
  const answered = () => {
    counter.answers += 1;
    if (active) send();
    else counter.onIdle();
  };
  socket.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = pending.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 200')) throw new Error(`expected 200, got ${head.split('\r\n')[0]}`);
      const total = end + 4 + Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < total) return;
      pending = pending.subarray(total);
      answered();
    }
  });
  return {
    start: () => {
      active = true;
      void connected.then(send);
    },
    stop: () => {
      active = false;
    },
    close: () => socket.destroy(),
  };
}

/** Starts the server of `id` pinned to CPU 1, and opens its connections. */
async function startVariant(id, issuer, requests) {
  const [framework, variant] = id.split(':');
  const { child, url } = await startServer(framework, variant, issuer, { server: '1' });
  const counter = { answers: 0, onIdle: () => {} };
  const port = Number(new URL(url).port);
  const connections = Array.from({ length: CONNECTIONS }, () => connection(port, requests, counter));
  return { id, child, counter, connections, rates: [], ratios: [], ticks: 0, answers: 0 };
}

/** Drives `server` for `ms`, waits for its last answers; its rate and the CPU it used. */
async function burst(server, ms) {
  const answersBefore = server.counter.answers;
  const ticksBefore = cpuTicks(server.child.pid);
  const started = performance.now();
  for (const c of server.connections) c.start();
  await sleep(ms);
  for (const c of server.connections) c.stop();
  const rate = ((server.counter.answers - answersBefore) * 1000) / (performance.now() - started);
  let left = CONNECTIONS;
  await Promise.race([new Promise((resolve) => (server.counter.onIdle = () => --left === 0 && resolve())), sleep(200)]);
  server.counter.onIdle = () => {};
  return { rate, ticks: cpuTicks(server.child.pid) - ticksBefore, answers: server.counter.answers - answersBefore };
}

function quartile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
const key = createBenchKey();
const jwks = await serveJwks(() => ({ keys: [key.jwk] }));
try {
  const issuer = new URL(jwks.url).origin;
  const headers = (await signMany(key, issuer, TOKENS)).map((token) => flat(`Bearer ${token}`));
  const requests = headers.map((authorization) => Buffer.from(`GET ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nauthorization: ${authorization}\r\n\r\n`, 'latin1'));
  const servers = [];
  for (const id of ids) servers.push(await startVariant(id, issuer, requests));
  for (const server of servers) await burst(server, 1000); // warm-up, untimed
  console.log(`${cycles} cycles of ${burstMs} ms bursts; load average before: ${os.loadavg().map((x) => x.toFixed(2)).join(' / ')}`);
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    await machineIdle();
    const rates = new Map();
    for (const server of cycle % 2 === 0 ? servers : [...servers].reverse()) {
      const result = await burst(server, burstMs);
      rates.set(server, result.rate);
      server.rates.push(result.rate);
      server.ticks += result.ticks;
      server.answers += result.answers;
    }
    for (const server of servers) server.ratios.push(rates.get(server) / rates.get(servers[0]));
  }
  const microsPerRequest = (server) => (server.ticks * 1e6) / TICKS_PER_SECOND / server.answers;
  const base = microsPerRequest(servers[0]);
  for (const server of servers) {
    const us = microsPerRequest(server);
    console.log(
      `${server.id.padEnd(24)} ${median(server.rates).toFixed(0).padStart(7)} req/s  × ${ids[0]}: ${median(server.ratios).toFixed(3)} (IQR ${quartile(server.ratios, 0.25).toFixed(3)}–${quartile(server.ratios, 0.75).toFixed(3)})  server CPU ${us.toFixed(1)} µs/request (${us >= base ? '+' : ''}${(us - base).toFixed(1)})`,
    );
  }
  for (const server of servers) {
    for (const c of server.connections) c.close();
    await stopServer(server.child);
  }
} finally {
  await jwks.close();
}
