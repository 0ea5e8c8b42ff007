/**
 * A bench's command line: its flags, its help and how it ends. Every bench's header comment opens with a summary
 * paragraph and a synopsis paragraph (`npm run bench:x -- [--flag value] …`); `--help` prints those two, and a command
 * line a bench cannot run is reported in one line with the synopsis (exit 2), never as a stack trace, before the bench
 * touches the lab.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command line the bench cannot run: its message names the flag and what is wrong with its value. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A `--flag` value that must be an integer of at least `min`; `fallback` when the flag is absent. */
export function integerFlag(flag: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min)
    throw new UsageError(`--${flag} must be ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}, not ${JSON.stringify(text)}`);
  return n;
}

/** A `--flag` value that must be a positive integer; `fallback` when the flag is absent. */
export function positiveInt(flag: string, text: string | undefined, fallback: number): number {
  return integerFlag(flag, text, fallback, 1);
}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;
/** What parseArgs makes of `options` in strict mode without positional arguments. */
type FlagValues<O extends FlagOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>>['values'];

/**
 * The values of `argv`'s flags (node:util parseArgs: only the flags of `options`, no positional arguments); a flag
 * not in `options`, a string flag without its value or a boolean one with a value is a UsageError.
 */
export function benchFlags<const O extends FlagOptions>(argv: readonly string[], options: O): FlagValues<O> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    if (code.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((error as Error).message);
    throw error;
  }
}

/** The help of a bench: the first two paragraphs of its source's header comment, the summary and the synopsis. */
export interface BenchHelp {
  readonly summary: string;
  readonly synopsis: string;
}

/** Reads {@link BenchHelp} from a bench's source (TypeScript, or the JavaScript tsc made of it with its comments). */
export function benchHelp(source: string): BenchHelp {
  const header = /^(?:#![^\n]*\n)?\/\*\*\n([\s\S]*?)\n \*\//.exec(source)?.[1];
  const paragraphs = (header ?? '')
    .split('\n')
    .map((line) => line.replace(/^ \*(?: |$)/, ''))
    .join('\n')
    .split(/\n\s*\n/);
  const [summary, synopsis] = paragraphs;
  if (summary === undefined || synopsis === undefined || !/^\s+(npm run|node) /.test(synopsis))
    throw new Error('the header comment does not open with a summary and a synopsis (`npm run …` or `node …`) paragraph');
  return { summary, synopsis };
}

/**
 * Runs a bench's `main` on the process' arguments and ends the process: `--help` (or `-h`) prints the bench's help
 * instead and exits 0; a UsageError prints its message and the synopsis, exit 2; any other failure its stack, exit 1;
 * success exits with `process.exitCode` (0 unless the bench set it).
 */
export async function runBench(moduleUrl: string, main: (argv: readonly string[]) => Promise<void> | void): Promise<void> {
  const file = fileURLToPath(moduleUrl);
  const name = `bench/${basename(file).replace(/\.[cm]?[jt]s$/, '')}`;
  const help = () => benchHelp(readFileSync(file, 'utf8'));
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    const { summary, synopsis } = help();
    process.stdout.write(`${summary}\n\n${synopsis}\n\nThe rest (what it measures, how, its figures) is in ${name}.ts' header comment.\n`);
    process.exit(0);
  }
  try {
    await main(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${name}: ${error.message}\n\n${help().synopsis}\n`);
      process.exit(2);
    }
    process.stderr.write(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  }
  process.exit();
}
