/** CPU time of this process's threads: a busy machine moves it less than it moves a rate. */
import { readFileSync } from 'node:fs';

/**
 * The CPU the event loop's thread has used (ms): its scheduler time on Linux
 * (`/proc/self/task/<pid>/schedstat`, in ns), `NaN` elsewhere.
 */
export function mainThreadCpuMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** The CPU every thread of the process has used (ms), user and system. */
export function processCpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
