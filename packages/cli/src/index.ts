// For tests and other packages that drive the CLI in-process: `run(argv, io)` returns the exit code.
export { buildProgram, run } from "./program.js";
export type { Io, TextSink } from "./io.js";
