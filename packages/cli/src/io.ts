/** Where a run of the CLI writes, and the environment it reads: the process's, or a test's. */
export interface TextSink {
  write(text: string): unknown;
}

export interface Io {
  stdout: TextSink;
  stderr: TextSink;
  env: Readonly<Record<string, string | undefined>>;
}
