// The Node.js release the agent's image runs (the Dockerfile's `FROM node:<version>-…` lines), for the e2e suites and
// the benches to run the agent on the runtime a cluster runs it on, whatever Node.js runs them (the agent's memory and
// the built-in modules it loads differ between Node.js 20 and 22). Fetched from the npm registry, where the
// `node-<platform>-<arch>` packages carry each release's binary (npm checks the tarball against the registry's
// integrity hash), and cached next to the lab's builds:
//   ~/.cache/extended-deployment/lab/node-v<version>-<platform>-<arch>/bin/node
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, repoRoot } from './build.js';

/** An exact release in a Dockerfile's `FROM node:<tag>`: `22.23.5-bookworm-slim` pins 22.23.5. */
const PINNED_TAG = /^(\d+\.\d+\.\d+)(?:-[\w.-]+)?$/;

/**
 * The Node.js release every `FROM node:…` line of `dockerfile` (text) pins, e.g. `22.23.5`. Throws when a line names a
 * moving tag (`22-bookworm-slim`: a rebuild could change the runtime the tests and benches did not run) or when the
 * stages name different releases (the image builds with one and runs another).
 */
export function pinnedNodeRelease(dockerfile: string): string {
  const tags = [...dockerfile.matchAll(/^FROM\s+node:(\S+)/gim)].map((m) => m[1] ?? '');
  if (tags.length === 0) throw new Error('Dockerfile: no `FROM node:<version>` line');
  const releases = tags.map((tag) => {
    const release = PINNED_TAG.exec(tag)?.[1];
    if (release === undefined) throw new Error(`Dockerfile: FROM node:${tag} names no exact release (write e.g. node:22.23.5-bookworm-slim)`);
    return release;
  });
  const distinct = [...new Set(releases)];
  if (distinct.length > 1) throw new Error(`Dockerfile: the stages run different Node.js releases (${distinct.join(', ')}); pin one`);
  return distinct[0]!;
}

/** The release the repository's Dockerfile pins. */
export function imageNodeRelease(): string {
  return pinnedNodeRelease(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
}

/** The cache directory of a release for this machine (`node-v22.23.5-linux-x64`). */
function releaseDir(release: string): string {
  return join(cacheRoot(), `node-v${release}-${process.platform}-${process.arch}`);
}

/** Whether `binary` runs and reports `release`. */
function runs(binary: string, release: string): boolean {
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return version.status === 0 && version.stdout.trim() === `v${release}`;
}

/**
 * The path of the image's Node.js binary, fetched into the cache the first time (about 30 MB from the npm registry).
 * A fetch writes into a directory of its own and renames it into place, so a killed fetch leaves nothing half-written
 * and two at once both end with the same binary.
 */
export function imageNode(log: (s: string) => void = (s) => console.error(s)): string {
  found ??= nodeRelease(imageNodeRelease(), log);
  return found;
}

/** The binary {@link imageNode} found in this process (each e2e worker starts many agents). */
let found: string | undefined;

/** The path of Node.js `release`'s binary in the cache, fetched the first time (see {@link imageNode}). */
export function nodeRelease(release: string, log: (s: string) => void): string {
  const dir = releaseDir(release);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary) && runs(binary, release)) return binary;
  const spec = `node-${process.platform}-${process.arch}@${release}`;
  log(`lab: fetching Node.js ${release} from the npm registry (${spec})`);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const pack = spawnSync('npm', ['pack', spec, '--pack-destination', tmp, '--silent', '--no-audit', '--no-fund'], { encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack ${spec} failed (is there a package for this platform?): ${pack.stderr.trim()}`);
    const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (tarball === undefined) throw new Error(`npm pack ${spec} wrote no tarball into ${tmp}`);
    const untar = spawnSync('tar', ['-xzf', tarball, '--strip-components=1', 'package/bin/node'], { cwd: tmp, encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`tar -xzf ${tarball} failed: ${untar.stderr.trim()}`);
    rmSync(join(tmp, tarball));
    if (!runs(join(tmp, 'bin', 'node'), release)) throw new Error(`the binary of ${spec} does not run or does not report v${release}`);
    // Another fetch may have put its copy into place meanwhile: the same release, so keep that one.
    if (existsSync(binary) && runs(binary, release)) return binary;
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(binary)) throw e;
    }
    return binary;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
