import Table from 'cli-table3';

/** Output formats of read commands. */
export type OutputFormat = 'text' | 'json';

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
