import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fieldReference } from '../../core/reference.js';

/** `edctl docs`: the field reference generated from the schemas. */
export function registerDocs(program: Command): void {
  const bin = program.name();
  program
    .command('docs')
    .description('Print or write the field reference of DeployRegion, ExtendedDeployment, Cluster and Fleet')
    .option('-o, --output <file>', 'write to this file (default: print to stdout)')
    .addHelpText('after', `\nExamples:\n  ${bin} docs -o docs/reference.md\n  ${bin} docs | less`)
    .action((options: { output?: string }) => {
      if (options.output === undefined) {
        process.stdout.write(fieldReference());
        return;
      }
      mkdirSync(dirname(options.output), { recursive: true });
      writeFileSync(options.output, fieldReference());
    });
}
