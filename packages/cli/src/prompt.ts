import { createInterface } from "node:readline/promises";
import { UsageError } from "./errors.js";

/**
 * Asks on the terminal (the question on stderr, so stdout stays the command's output). A hidden
 * answer (password) is not echoed. Without a terminal the caller must pass the value as a flag.
 */
export async function prompt(question: string, options: { hidden?: boolean; flag: string }): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`no terminal to ask on: pass ${options.flag}`);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (options.hidden) {
    // readline echoes through _writeToOutput; printing nothing for the typed characters hides them.
    const writable = rl as unknown as { _writeToOutput: (text: string) => void };
    let asked = false;
    writable._writeToOutput = (text: string) => {
      if (!asked) {
        process.stderr.write(text);
        asked = true;
      }
    };
  }
  try {
    const answer = await rl.question(question);
    // A password is taken as typed: spaces are characters of it.
    return options.hidden ? answer : answer.trim();
  } finally {
    if (options.hidden) process.stderr.write("\n");
    rl.close();
  }
}
