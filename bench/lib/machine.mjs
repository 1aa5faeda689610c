/**
 * What the figures were measured on: Node's version, the CPU, and how busy the machine was.
 */
import os from 'node:os';

export function describeMachine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    openssl: process.versions.openssl,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    threadPool: process.env.UV_THREADPOOL_SIZE ?? '4 (default)',
  };
}

/** The 1, 5 and 15 minute load averages, rounded. */
export function loadAverage() {
  return os.loadavg().map((value) => Math.round(value * 100) / 100);
}

/** CPU time (user + system, all cores) spent by every process since boot, for a busy fraction. */
export function cpuTimes() {
  let busy = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const { user, nice, sys, idle, irq } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + idle + irq;
  }
  return { busy, total };
}

/** Fraction of all cores busy between two {@link cpuTimes} readings. */
export function busyFraction(before, after) {
  const total = after.total - before.total;
  return total <= 0 ? 0 : (after.busy - before.busy) / total;
}
