import { run } from "./program.js";

const exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });

// Open HTTP/2 sessions would keep the process alive; exit once both streams have flushed.
await Promise.all([new Promise((resolve) => process.stdout.write("", resolve)), new Promise((resolve) => process.stderr.write("", resolve))]);
process.exit(exitCode);
