#!/usr/bin/env node
import { programNameOf } from './program.js';
import { run } from './run.js';

// Started as `kubectl-ed` (the kubectl plugin: `kubectl ed ...`), help and examples say `kubectl ed`.
process.exitCode = await run(process.argv.slice(2), { name: programNameOf(process.argv[1]) });
