import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from './user-error.js';

/** Listings of a large repository exceed execFileSync's default of 1 MiB. */
const MAX_OUTPUT = 256 * 1024 * 1024;

/** Runs git in `cwd`; a failure becomes `undefined`, so no caller ever passes git's own `fatal:` output on. */
function git(cwd: string, args: readonly string[]): Buffer | undefined {
  try {
    return execFileSync('git', [...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: MAX_OUTPUT });
  } catch {
    return undefined;
  }
}

/** A path with symbolic links resolved as far as it exists, so that it compares with git's (physical) top level. */
function physical(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(physical(parent), basename(absolute));
}

// Only these are read from a folder (as edctl's loader reads folders); a file named on its own is read whatever its name.
const SPEC_FILE = /\.(ya?ml|json)$/;

/**
 * Reads `paths` (relative to the working directory, which may be any folder of the repository) as they were at a git
 * revision: their files are written to a temporary folder (the work tree and the index stay untouched) and `read`
 * gets, per path, where it is in that folder, or `undefined` when the path held no file at the revision (it is new).
 * The folder is removed when `read` returns or throws. A path outside the repository, or a revision that is not one,
 * is a UserError.
 */
export function readAtRevision<T>(ref: string, paths: readonly string[], read: (atRef: readonly (string | undefined)[]) => T): T {
  const top = git(process.cwd(), ['rev-parse', '--show-toplevel'])?.toString('utf8').trim();
  if (!top || !git(top, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])) {
    throw new UserError([`--from ${ref}: not a file, and not a git revision of this repository`]);
  }
  const root = realpathSync(top);
  const inRepo = paths.map((p) => {
    const rel = relative(root, physical(p));
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new UserError([`--from ${ref}: ${p} is outside the git repository ${root}`]);
    return rel;
  });
  const dir = mkdtempSync(join(tmpdir(), 'edctl-from-'));
  try {
    const atRef = inRepo.map((rel) => {
      const listing = git(root, ['ls-tree', '-r', '-z', '--full-tree', ref, '--', rel === '' ? '.' : rel]);
      if (!listing) throw new UserError([`--from ${ref}: cannot list ${rel === '' ? '.' : rel} at ${ref}`]);
      const blobs = listing
        .toString('utf8')
        .split('\0')
        .flatMap((entry) => {
          const [, mode, type, hash, file] = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(entry) ?? [];
          // Symbolic links and submodules hold no spec text.
          return type === 'blob' && mode !== '120000' && hash && file && (file === rel || SPEC_FILE.test(file)) ? [{ hash, file }] : [];
        });
      for (const { hash, file } of blobs) {
        const text = git(root, ['cat-file', 'blob', hash]);
        if (!text) throw new UserError([`--from ${ref}: cannot read ${file} at ${ref}`]);
        const target = join(dir, file);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, text);
      }
      return blobs.length > 0 ? join(dir, rel) : undefined;
    });
    return read(atRef);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
