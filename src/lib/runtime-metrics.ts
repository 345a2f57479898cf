import { existsSync, readdirSync, readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, type Registry } from "prom-client";

/**
 * The process's own figures on /metrics (README "Operations", Health), as Bun measures them.
 * prom-client's default set is written for Node.js, and under Bun it named Node's version, read a
 * heap total smaller than the heap used, took the data segment for a heap, and kept four families
 * that never had a sample (GC durations, active handles, requests and resources: Bun tracks none of
 * them). Here is only what Bun measures, each read cheaply at scrape time. The heap's capacity is left
 * out: Bun gives it only by walking every object of the heap, which blocks the event loop for a time
 * that grows with the heap; so is the virtual memory size, which counts the gigabytes of address space
 * Bun reserves and never touches.
 */
export function registerRuntimeMetrics(registry: Registry): void {
  const registers = [registry];
  const cpu = (name: string, help: string, read: (u: NodeJS.CpuUsage) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        // the kernel's running total, set as it is: a counter that only ever grows
        this.reset();
        this.inc(read(process.cpuUsage()) / 1e6);
      },
    });
  cpu("vigil_process_cpu_user_seconds_total", "User CPU time spent by the process, in seconds", (u) => u.user);
  cpu("vigil_process_cpu_system_seconds_total", "System CPU time spent by the process, in seconds", (u) => u.system);
  cpu("vigil_process_cpu_seconds_total", "User and system CPU time spent by the process, in seconds", (u) => u.user + u.system);

  const gauge = (name: string, help: string, read: () => number) => new Gauge({ name, help, registers, collect() { this.set(read()); } });
  const started = Math.round(performance.timeOrigin / 1000);
  gauge("vigil_process_start_time_seconds", "When the process started, in Unix seconds", () => started);
  gauge("vigil_process_resident_memory_bytes", "Resident memory of the process (RSS), in bytes", () => process.memoryUsage.rss());
  if (existsSync("/proc/self/fd")) {
    // Linux: one directory entry per open descriptor, less the one reading the directory
    gauge("vigil_process_open_fds", "Open file descriptors", () => readdirSync("/proc/self/fd").length - 1);
    const max = maxOpenFiles();
    if (max !== null) gauge("vigil_process_max_fds", "Most file descriptors the process may open (its soft limit)", () => max);
  }

  const version = process.versions.bun ?? "unknown";
  const [major = "", minor = "", patch = ""] = version.split(".");
  new Gauge({ name: "vigil_bun_version_info", help: "The Bun runtime running Vigil", labelNames: ["version", "major", "minor", "patch"], registers }).set({ version, major, minor, patch }, 1);
  gauge(
    "vigil_bun_heap_size_bytes",
    "JavaScript heap: the objects that survived the last garbage collection, with the memory they own outside it (string contents, ArrayBuffers), in bytes",
    () => process.memoryUsage().heapUsed,
  );
  gauge("vigil_bun_heap_extra_memory_bytes", "Memory the heap's objects own outside it (string contents, ArrayBuffers), in bytes; part of vigil_bun_heap_size_bytes", () => process.memoryUsage().external);

  // the 99th percentile and the longest delay of a 10 ms timer since the previous scrape: a stall of
  // the thread (a long synchronous call, garbage collection) shows here. Once both are read, in
  // whichever order, the measurement starts over.
  const delays = monitorEventLoopDelay({ resolution: 10 });
  delays.enable();
  let read = 0;
  const delay = (of: () => number) => () => {
    const seconds = delays.count > 0 ? of() / 1e9 : NaN;
    if (++read === 2) (read = 0), delays.reset();
    return seconds;
  };
  gauge("vigil_event_loop_delay_p99_seconds", "99th percentile of the event loop's delay since the previous scrape, in seconds (NaN: no timer ran since)", delay(() => delays.percentile(99)));
  gauge("vigil_event_loop_delay_max_seconds", "Longest delay of the event loop since the previous scrape, in seconds (NaN: no timer ran since)", delay(() => delays.max));
}

/** The soft limit of open files from /proc/self/limits, or null when it is unlimited or unreadable. */
function maxOpenFiles(): number | null {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) ? soft : null;
  } catch {
    return null;
  }
}
