/**
 * The example gateway as a child process, started exactly as `npm run example` starts it
 * (`node examples/gateway/server.mjs`, PORT=0, 127.0.0.1), with the memory probe preloaded. Its
 * stdout (the banner, then one log line per request) goes to a file, so that a busy load run never
 * blocks it on a full pipe; the banner gives its address.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const probe = pathToFileURL(fileURLToPath(new URL('./memory-probe.mjs', import.meta.url))).href;

/** Resident set size and its peak, in bytes, from /proc (Linux); `null` elsewhere. */
function procMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: field('VmRSS'), peakRss: field('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Starts the gateway and resolves once it prints its address.
 * @param {{ stateDir: string, timeoutMs?: number }} options `stateDir` holds the demo key and the log
 */
export async function startGateway({ stateDir, timeoutMs = 20_000 }) {
  const logFile = join(stateDir, 'gateway.log');
  const logFd = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--expose-gc', '--import', probe, 'examples/gateway/server.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir },
    stdio: ['ignore', logFd, 'pipe', 'ipc'],
  });
  closeSync(logFd);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const url = await new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const banner = readFileSync(logFile, 'utf8');
      const address = /^ {2}gateway +(http:\/\/127\.0\.0\.1:\d+)$/m.exec(banner)?.[1];
      if (address !== undefined && /^Request log/m.test(banner)) {
        clearInterval(poll);
        resolve(address);
      } else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
        clearInterval(poll);
        reject(new Error(`the example gateway did not start:\n${banner}${stderr}`));
      }
    }, 50);
  });

  let asked = 0;
  /** `process.memoryUsage()` of the gateway, after a full GC when `gc` is set. */
  function memory({ gc = false } = {}) {
    const id = ++asked;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the gateway did not report its memory')), 10_000);
      const onMessage = (message) => {
        if (message?.type !== 'memory' || message.id !== id) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve({ ...message.usage, ...procMemory(child.pid) });
      };
      child.on('message', onMessage);
      child.send({ type: 'memory', id, gc });
    });
  }

  /** Stops the gateway (SIGTERM, then SIGKILL after 5 s) and resolves with how it exited. */
  async function stop() {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      const result = await exited;
      clearTimeout(forced);
      return result;
    }
    return exited;
  }

  return {
    url,
    pid: child.pid,
    logFile,
    memory,
    stop,
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
  };
}
