import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * What Linux's /proc says about a server process: CPU time (user + system, its own and
 * its waited-for children's, plus any live descendants) and resident memory. Every figure
 * of "CPU per request" comes from here, so it counts the servers only, never the load
 * generator.
 */

let clockTicks: number | undefined;

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on Linux almost always). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

interface StatLine {
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

function readStat(pid: number): StatLine | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // rest[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
    const field = (n: number) => Number(rest[n - 3] ?? 0);
    return { ppid: field(4), ticks: field(14) + field(15) + field(16) + field(17) };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** CPU time in milliseconds of each root pid and every live descendant of it, summed. */
export function cpuMillis(pids: readonly number[]): number {
  const stats = new Map<number, StatLine>();
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (stat) stats.set(pid, stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) {
    const list = children.get(stat.ppid) ?? [];
    list.push(pid);
    children.set(stat.ppid, list);
  }
  let ticks = 0;
  const seen = new Set<number>();
  const stack = [...pids];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += stats.get(pid)?.ticks ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return (ticks * 1000) / ticksPerSecond();
}

/** VmRSS of a process in KiB (undefined when it is gone). */
export function rssKib(pid: number): number | undefined {
  return statusField(pid, "VmRSS");
}

/** VmHWM (peak resident set) of a process in KiB. */
export function peakRssKib(pid: number): number | undefined {
  return statusField(pid, "VmHWM");
}

function statusField(pid: number, name: string): number | undefined {
  try {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid listening on 127.0.0.1/0.0.0.0 TCP `port` (MariaDB, NATS), found through
 * /proc/net/tcp{,6} and the socket inodes in /proc/<pid>/fd; undefined when not visible.
 */
export function pidListeningOn(port: number): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is col 1 ("0100007F:0CEA"), state col 3 ("0A" = LISTEN), inode col 9.
      if (cols.length > 9 && cols[1]?.endsWith(`:${hexPort}`) && cols[3] === "0A") inodes.add(cols[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of allPids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return pid;
      } catch {
        // The fd closed under us.
      }
    }
  }
  return undefined;
}
