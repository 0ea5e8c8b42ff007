import Table from 'cli-table3';
import { Option } from 'commander';
import { stringify } from 'yaml';

/** Output formats of read commands: text for people, JSON and YAML for programs. */
export type OutputFormat = 'text' | 'json' | 'yaml';

/** kubectl's -o/--output: text by default, json and yaml always, and the command's own formats (`markdown`). */
export function outputOption(...more: readonly string[]): Option {
  return new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml', ...more]).default('text');
}

/** The value as -o json or -o yaml prints it; YAML holds exactly the data of the JSON. */
export function data(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? json(value) : stringify(JSON.parse(JSON.stringify(value)) as unknown, { lineWidth: 0 });
}

/** A borderless, left-aligned table, like kubectl's. */
export function table(head: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const t = new Table({
    head: [...head],
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const row of rows) t.push(row.map(String));
  return t
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

/** JSON as every read command prints it: two-space indent and a final newline. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
