// What a process and its threads use, read from /proc: resident memory and CPU time.
import { readdirSync, readFileSync } from "node:fs";

export interface Memory {
  rssMb: number;
  peakRssMb: number;
  /** Heap and other private memory; the rest of RSS is file pages (code, a memory-mapped database). */
  anonMb: number;
  fileMb: number;
}

const toMb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;

/** VmRSS and VmHWM of a process (the embedding worker is a thread, so it is included). */
export function processMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return {
    rssMb: toMb(field("VmRSS")),
    peakRssMb: toMb(field("VmHWM")),
    anonMb: toMb(field("RssAnon")),
    fileMb: toMb(field("RssFile") + field("RssShmem")),
  };
}

/**
 * CPU time (user + system, all threads) a process has used, in ms. Unlike latency it hardly moves
 * when other work shares the machine, so it is the number to compare across runs.
 */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU time one thread of a process has used, in ms; the main thread's id is the pid. */
export function threadCpuMs(pid: number, tid: number): number {
  return statCpuMs(`/proc/${pid}/task/${tid}/stat`);
}

/** CPU time of each of a process's threads, by thread id. */
export function threadsCpuMs(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), threadCpuMs(pid, Number(tid)));
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return threads;
}

// USER_HZ is 100 on every Linux architecture Node runs on.
const CLOCK_TICKS_PER_SECOND = 100;

function statCpuMs(path: string): number {
  const stat = readFileSync(path, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}
