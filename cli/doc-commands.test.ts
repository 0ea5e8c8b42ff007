// Every edctl command the docs show runs, against the examples, and exits as the text says: a trailing comment ending
// in `exit N` states the code, else 0. The docs are read when the tests run, so a change of either side is checked.
// What cannot run here is skipped by a rule listed below (and shows as skipped, with its reason), never silently.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from './run.js';
import { captureOutput, captured } from './test-support.js';

/** A command shown in a fenced shell block of the docs. */
interface DocCommand {
  /** `file:line`, where the command starts. */
  readonly at: string;
  /** The command as the docs show it (continuation lines joined). */
  readonly text: string;
  /** The arguments edctl gets, placeholders and output paths rewritten. */
  readonly argv: readonly string[];
  /** The file the docs feed on stdin (`< file`, `cat file |`). */
  readonly stdin?: string;
  /** The exit code the text states. */
  readonly exit: number;
  /** Why it does not run here, by one of the SKIPPED rules. */
  readonly skip?: string;
}

/** The documents whose commands run: the README and every page of docs/. */
const DOCUMENTS = ['README.md', ...readdirSync('docs').map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));

/** Fenced blocks whose lines are commands (in `console` blocks, only the lines after a `$ ` prompt). */
const SHELL_FENCES = new Set(['sh', 'bash', 'shell', 'console']);

/** The ways the docs start edctl, longest first. */
const PROGRAMS = ['npx tsx cli/main.ts', 'node lib/cli/main.js', 'npx edctl', 'kubectl-ed', 'kubectl ed', 'edctl'];

/** Placeholder folders of the docs, which stand for a folder of specs: the upstream sample is one. */
const PLACEHOLDERS: Readonly<Record<string, string>> = { 'specs/': 'examples/upstream-sample', 'my-app/': 'examples/upstream-sample' };

/** Values of an output option that name a format; any other value is a path, written into a temporary folder instead. */
const FORMATS = new Set(['json', 'yaml', 'markdown', 'wide', 'name']);
const OUTPUT_OPTIONS = new Set(['-o', '--output', '--output-dir']);

/** Commands that need a cluster: this test runs without one. */
const CLUSTER_COMMANDS = new Set(['status', 'history', 'approve', 'pause', 'resume', 'abort', 'agent', 'fleet']);

/** Every reason a documented command does not run here. Nothing else is skipped. */
const SKIPPED: readonly { readonly reason: string; readonly applies: (argv: readonly string[]) => boolean }[] = [
  { reason: 'needs a cluster', applies: (argv) => CLUSTER_COMMANDS.has(argv[0] ?? '') },
  {
    reason: 'needs a git remote (--from names a remote-tracking branch)',
    applies: (argv) => argv.some((a, i) => (a === '--from' && /^origin\//.test(argv[i + 1] ?? '')) || /^--from=origin\//.test(a)),
  },
];

/** Shell words of `line`: quotes and backslashes resolved, `#` comments apart; `|`, `<` and `>` are words of their own. */
function shellWords(line: string): { words: string[]; comment: string } {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] ?? '';
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) word += line[++i] ?? '';
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= '';
    } else if (ch === '\\' && i + 1 < line.length) {
      word = (word ?? '') + (line[++i] ?? '');
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (ch === '#' && word === undefined) {
      return { words, comment: line.slice(i + 1).trim() };
    } else if (ch === '|' || ch === '<' || ch === '>') {
      if (word !== undefined) words.push(word);
      words.push(ch);
      word = undefined;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (word !== undefined) words.push(word);
  return { words, comment: '' };
}

/** The edctl command of one shell line, or undefined when the line does not run edctl. */
function docCommand(at: string, text: string, outputDir: string): DocCommand | undefined {
  const { words, comment } = shellWords(text);
  let stdin: string | undefined;
  // `cat file | edctl ...` feeds a file, as `edctl ... < file` does.
  if (words[0] === 'cat' && words[2] === '|') stdin = words.splice(0, 3)[1];
  const program = PROGRAMS.find((p) => words.join(' ') === p || words.join(' ').startsWith(`${p} `));
  if (!program) return undefined;
  words.splice(0, program.split(' ').length);
  // A pipe's consumer (kubectl apply, jq) does not run: the command is edctl's part; `> file` only keeps the output.
  const pipe = words.indexOf('|');
  if (pipe >= 0) words.splice(pipe);
  const input = words.indexOf('<');
  if (input >= 0) stdin = words.splice(input, 2)[1];
  const output = words.indexOf('>');
  if (output >= 0) words.splice(output, 2);
  // `--output-dir=out/` is `--output-dir out/`.
  const split = words.flatMap((word) => (/^-[-\w]+=/.test(word) ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word]));
  const argv = split.map((word, i) => {
    if (OUTPUT_OPTIONS.has(split[i - 1] ?? '') && !FORMATS.has(word)) return join(outputDir, basename(word));
    return PLACEHOLDERS[word] ?? word;
  });
  const stated = /\bexit (\d+)$/.exec(comment);
  const skip = SKIPPED.find((rule) => rule.applies(argv))?.reason;
  return { at, text, argv, ...(stdin === undefined ? {} : { stdin }), exit: stated ? Number(stated[1]) : 0, ...(skip === undefined ? {} : { skip }) };
}

/** Every edctl command in the fenced shell blocks of `markdown`. */
function docCommands(file: string, markdown: string, outputDir: string): DocCommand[] {
  const commands: DocCommand[] = [];
  let fence: string | undefined;
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const marker = /^\s*```\s*(\w*)/.exec(line);
    if (marker) {
      fence = fence === undefined ? (marker[1] ?? '') : undefined;
      continue;
    }
    if (fence === undefined || !SHELL_FENCES.has(fence)) continue;
    let text = line.trim();
    if (fence === 'console') {
      if (!text.startsWith('$ ')) continue;
      text = text.slice(2);
    } else text = text.replace(/^\$ /, '');
    const start = i + 1;
    while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1)} ${(lines[++i] ?? '').trim()}`;
    const command = docCommand(`${file}:${start}`, text, outputDir);
    if (command) commands.push(command);
  }
  return commands;
}

describe('reading commands from the docs', () => {
  const doc = (...lines: string[]) => docCommands('x.md', lines.join('\n'), '/tmp/out');
  const pick = (c: DocCommand) => ({ argv: c.argv, exit: c.exit, skip: c.skip, stdin: c.stdin });

  it.each<[string, string[], Partial<ReturnType<typeof pick>>[]]>([
    ['a plain edctl line, exit 0 by default', ['```sh', 'edctl validate -f a.yaml', '```'], [{ argv: ['validate', '-f', 'a.yaml'], exit: 0 }]],
    [
      'npx, with a comment stating the exit code',
      ['```sh', 'npx edctl validate -f bad/   # one problem; exit 1', '```'],
      [{ argv: ['validate', '-f', 'bad/'], exit: 1 }],
    ],
    ['a comment that only mentions an exit code states none', ['```sh', 'npx edctl validate -f a/  # exit 1 when invalid', '```'], [{ exit: 0 }]],
    [
      'console blocks: the prompt lines only, not the output',
      ['```console', '$ edctl plan -f specs/', 'edctl says hi', '```'],
      [{ argv: ['plan', '-f', 'examples/upstream-sample'] }],
    ],
    ['other fences and prose are not run', ['edctl validate -f a', '```yaml', 'edctl: x', '```', '```', 'edctl plan', '```'], []],
    [
      'kubectl ed, a quoted argument and a continuation line',
      ['```bash', "kubectl ed plan -f 'a b' \\", '  -o json', '```'],
      [{ argv: ['plan', '-f', 'a b', '-o', 'json'] }],
    ],
    [
      'an output path goes to a temporary folder, a format stays',
      ['```sh', 'edctl render -f a -o out/', 'edctl render -f a --output-dir=out/', 'edctl plan -f a -o json', '```'],
      [
        { argv: ['render', '-f', 'a', '-o', '/tmp/out/out'] },
        { argv: ['render', '-f', 'a', '--output-dir', '/tmp/out/out'] },
        { argv: ['plan', '-f', 'a', '-o', 'json'] },
      ],
    ],
    ['a pipe: the edctl part runs', ['```sh', 'edctl crds | kubectl apply -f -', '```'], [{ argv: ['crds'] }]],
    ['stdin from a file', ['```sh', 'cat a.yaml | edctl validate -f -', 'edctl plan -f - < b.yaml', '```'], [{ stdin: 'a.yaml' }, { stdin: 'b.yaml' }]],
    [
      'the cluster commands are skipped',
      ['```sh', 'edctl status web', 'kubectl ed approve web', 'edctl agent', '```'],
      [{ skip: 'needs a cluster' }, { skip: 'needs a cluster' }, { skip: 'needs a cluster' }],
    ],
    [
      'a remote-tracking --from is skipped',
      ['```sh', 'edctl diff -f a --from origin/main', '```'],
      [{ skip: 'needs a git remote (--from names a remote-tracking branch)' }],
    ],
  ])('%s', (_what, lines, expected) => {
    expect(doc(...lines).map(pick)).toEqual(expected.map((e) => expect.objectContaining(e)));
  });
});

describe('the commands the docs show', () => {
  captureOutput();
  const outputDir = mkdtempSync(join(tmpdir(), 'edctl-docs-'));
  const commands = DOCUMENTS.flatMap((file) => docCommands(file, readFileSync(file, 'utf8'), outputDir));

  it('are found in the README and the CLI page', () => {
    const files = new Set(commands.map((c) => c.at.split(':')[0]));
    expect(files).toContain('README.md');
    expect(files).toContain('docs/cli.md');
  });

  const runnable = commands.filter((c) => c.skip === undefined);
  it.each(runnable.map((c): [string, DocCommand] => [`${c.at} ${c.text}`, c]))('%s', async (_name, command) => {
    let exit: number;
    let stderr: string;
    if (command.stdin === undefined) {
      exit = await run(command.argv);
      stderr = captured.err;
    } else {
      // Standard input cannot be handed to edctl in-process: this one runs as a process of its own.
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...command.argv], { input: readFileSync(command.stdin), encoding: 'utf8' });
      exit = result.status ?? -1;
      stderr = result.stderr;
    }
    expect({ exit, stderr: exit === command.exit ? '' : stderr }).toEqual({ exit: command.exit, stderr: '' });
  });

  for (const command of commands.filter((c) => c.skip !== undefined)) it.skip(`${command.at} ${command.text} (${command.skip})`, () => {});
});
