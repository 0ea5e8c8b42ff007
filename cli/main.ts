#!/usr/bin/env node
import { programNameOf } from './program.js';
import { run } from './run.js';

// A reader that went away (`edctl status web --watch | head -3`) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

// Started as `kubectl-ed` (the kubectl plugin: `kubectl ed ...`), help and examples say `kubectl ed`.
process.exitCode = await run(process.argv.slice(2), { name: programNameOf(process.argv[1]) });
