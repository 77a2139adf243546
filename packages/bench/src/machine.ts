import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { repoRoot } from "./server-process.js";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  nodeVersion: string;
  platform: string;
  gitCommit: string;
  /** True when the work tree had uncommitted changes: the figures are of that tree, not of the commit alone. */
  gitDirty: boolean;
  /** 1-minute load average at the start: how busy the machine already was. */
  loadAverageAtStart: number;
}

function git(args: string[]): string {
  try {
    return execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

export function machineInfo(): MachineInfo {
  let cpuModel = cpus()[0]?.model ?? "unknown";
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (match?.[1]) cpuModel = match[1].trim();
  } catch {
    // Not Linux: os.cpus() it is.
  }
  return {
    cpuModel,
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    nodeVersion: process.version,
    platform: `${process.platform} ${process.arch}`,
    gitCommit: git(["rev-parse", "HEAD"]) || "unknown",
    gitDirty: git(["status", "--porcelain", "--untracked-files=no"]) !== "",
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
