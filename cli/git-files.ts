import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { UserError } from './user-error.js';

function git(args: readonly string[]): string {
  return execFileSync('git', [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Checks out the given paths as they were at a git ref into a temporary folder (nothing in the work tree changes)
 * and returns the same paths inside it.
 */
export function pathsAtRef(ref: string, paths: readonly string[]): string[] {
  let top: string;
  try {
    top = git(['rev-parse', '--show-toplevel']).trim();
    git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new UserError([`--from ${ref}: not a file, and not a git revision of this repository`]);
  }
  const dir = mkdtempSync(join(tmpdir(), 'edctl-from-'));
  const inRepo = paths.map((p) => relative(top, resolve(p)));
  const files = git(['ls-tree', '-r', '--name-only', ref, '--', ...inRepo])
    .split('\n')
    .filter((f) => /\.(ya?ml|json)$/.test(f));
  for (const file of files) {
    const target = join(dir, file);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, git(['show', `${ref}:${file}`]));
  }
  return inRepo.map((p) => join(dir, p));
}
