/**
 * CPU time and busy share of the calling thread over a window. The server
 * under test and the load generator run on different threads of one
 * process, so process.cpuUsage() (all threads) cannot tell their costs
 * apart. Node 20 has no process.threadCpuUsage() (it came in 23.9); on
 * Linux the scheduler's own account in /proc/thread-self/schedstat gives
 * the thread's time on CPU in nanoseconds, and a synchronous read runs on
 * the calling thread, so "thread-self" is that thread. Where neither
 * exists, the event loop's active time (ELU x wall time) stands in.
 */
import { readFileSync } from 'node:fs';

export interface ThreadTimes {
  /** CPU microseconds (user + system) of the calling thread so far. */
  readonly cpuUs: number;
  /** Microseconds it was ready to run but waited for a core, when the clock knows. */
  readonly waitUs?: number;
}

export interface ThreadClock {
  /** How the time is read, for the printed header. */
  readonly source: string;
  now(): ThreadTimes;
}

export interface ThreadWindow {
  readonly seconds: number;
  /** CPU microseconds of the thread in the window. */
  readonly cpuUs: number;
  /** Share of the window the thread's event loop was busy (event-loop utilisation), 0..1. */
  readonly busy: number;
  /**
   * Microseconds the thread waited for a core in the window: other threads or
   * processes on the machine took it. Undefined when the clock cannot tell.
   */
  readonly waitUs: number | undefined;
}

export const ELU_SOURCE = 'event-loop utilisation x wall time';

/** The best per-thread CPU clock available here, or undefined for the ELU fallback. */
export function threadClock(): ThreadClock | undefined {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (typeof usage === 'function') {
    return {
      source: 'process.threadCpuUsage()',
      now: () => {
        const u = usage.call(process);
        return { cpuUs: u.user + u.system };
      },
    };
  }
  try {
    // A kernel without scheduler statistics reads zero: treat that as missing.
    if (schedstat().cpuUs > 0) return { source: '/proc/thread-self/schedstat', now: schedstat };
  } catch {
    // Not Linux: the fallback.
  }
  return undefined;
}

function schedstat(): ThreadTimes {
  // Fields: time on CPU (ns), time ready to run but waiting for a core (ns), timeslices.
  const [onCpu, waiting] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 2).map(Number);
  return { cpuUs: onCpu! / 1000, waitUs: waiting! / 1000 };
}

/** Starts a window on the calling thread; the returned function ends it. */
export function measureThread(clock: ThreadClock | undefined): () => ThreadWindow {
  const at = performance.now();
  const elu = performance.eventLoopUtilization();
  const atStart = clock?.now();
  return () => {
    const used = performance.eventLoopUtilization(elu);
    const seconds = (performance.now() - at) / 1000;
    // ELU's active time (ms) also counts time the busy thread waited for a core, so it is only the fallback.
    if (clock === undefined || atStart === undefined)
      return { seconds, cpuUs: used.active * 1000, busy: used.utilization, waitUs: undefined };
    const atEnd = clock.now();
    const waitUs =
      atEnd.waitUs === undefined || atStart.waitUs === undefined ? undefined : atEnd.waitUs - atStart.waitUs;
    return { seconds, cpuUs: atEnd.cpuUs - atStart.cpuUs, busy: used.utilization, waitUs };
  };
}
