// Runs a command in a pseudo-terminal (util-linux `script`) and replays what it drew, so that a test can assert on the
// screens a program showed without a screenshot: a tiny terminal model applies the cursor movements and erasures
// log-update uses, and the screen is taken after every synchronized update (ESC[?2026h … ESC[?2026l, one per redraw).
import { spawn, type ChildProcess } from 'node:child_process';

/** The screen after each redraw, and at the end (lines without trailing blanks, no colours). */
export function terminalFrames(output: string): string[] {
  const rows: string[][] = [];
  let row = 0;
  let col = 0;
  const frames: string[] = [];
  const line = (r: number) => (rows[r] ??= []);
  const screen = () => {
    const lines = Array.from({ length: rows.length }, (_, r) =>
      Array.from({ length: (rows[r] ?? []).length }, (_, c) => rows[r]?.[c] ?? ' ')
        .join('')
        .trimEnd(),
    );
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines.join('\n');
  };
  // By code point, so that a multi-unit character is one cell.
  const chars = [...output];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\u001b' && chars[i + 1] === '[') {
      let j = i + 2;
      let params = '';
      while (j < chars.length && /[0-9;?]/.test(chars[j]!)) params += chars[j++];
      const final = chars[j] ?? '';
      i = j;
      const n = Number(params.replace('?', '').split(';')[0] || '0');
      switch (final) {
        case 'A':
          row = Math.max(0, row - Math.max(1, n));
          break;
        case 'B':
          row += Math.max(1, n);
          break;
        case 'C':
          col += Math.max(1, n);
          break;
        case 'D':
          col = Math.max(0, col - Math.max(1, n));
          break;
        case 'G':
          col = Math.max(0, n - 1);
          break;
        case 'K':
          if (n === 2) rows[row] = [];
          else if (n === 1) line(row).fill(' ', 0, col + 1);
          else line(row).length = Math.min(line(row).length, col);
          break;
        case 'J':
          if (n === 2 || n === 3) rows.length = 0;
          else {
            line(row).length = Math.min(line(row).length, col);
            rows.length = Math.min(rows.length, row + 1);
          }
          break;
        case 'H':
          row = Math.max(0, Number(params.split(';')[0] || '1') - 1);
          col = Math.max(0, Number(params.split(';')[1] || '1') - 1);
          break;
        case 'l':
          if (params === '?2026') frames.push(screen());
          break;
        default:
          break; // colours (m), cursor visibility and synchronized-output start (h)
      }
      continue;
    }
    if (ch === '\u001b') {
      i++; // a two-character escape (ESC 7, ESC 8, …): nothing log-update uses
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row++;
      col = 0;
      line(row);
    } else line(row)[col++] = ch;
  }
  const last = screen();
  if (frames[frames.length - 1] !== last) frames.push(last);
  return frames;
}

/** A command running in a pseudo-terminal of 120 × 40, its output as the terminal received it. */
export interface PtyProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Types on the terminal's keyboard: `\x03` is Ctrl-C (the terminal sends SIGINT to the command). */
  type(keys: string): void;
  readonly exited: Promise<number | null>;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Starts `argv` inside `script -qfec … /dev/null` (util-linux): its stdout and stderr are a terminal, so
 * `process.stdout.isTTY` is true in it; `script -e` exits with the command's exit code.
 */
export function spawnInPty(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): PtyProcess {
  const command = `stty cols 120 rows 40 2>/dev/null; exec ${argv.map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, type: (keys) => void child.stdin?.write(keys), exited };
}

/** A command with stdout and stderr as pipes (as in CI), its output kept. */
export function spawnPiped(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; stdout(): string; stderr(): string; exited: Promise<number | null> } {
  const [cmd, ...args] = argv;
  const child = spawn(cmd ?? '', args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}
