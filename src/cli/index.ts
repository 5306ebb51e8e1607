/** The command line's public surface: `main(argv)` runs a pgveil command and returns its exit code. */
export { main } from './main.js';
export type { CliIo } from './cliIo.js';
