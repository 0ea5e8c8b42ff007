import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imageNodeRelease, nodeRelease, pinnedNodeRelease } from '../cluster/image-node.js';

describe('pinnedNodeRelease', () => {
  it.each([
    ['FROM node:22.23.5-bookworm-slim AS build\nRUN x\nFROM node:22.23.5-bookworm-slim\n', '22.23.5'],
    ['FROM node:24.1.0\n', '24.1.0'],
    ['from node:22.23.5-alpine3.22 as build\n', '22.23.5'],
  ])('reads the one release of %j', (dockerfile, release) => {
    expect(pinnedNodeRelease(dockerfile)).toBe(release);
  });

  it.each([
    ['FROM node:22-bookworm-slim\n', 'FROM node:22-bookworm-slim names no exact release'],
    ['FROM node:lts\n', 'FROM node:lts names no exact release'],
    ['FROM node:22.23.5-bookworm-slim AS build\nFROM node:22.23.4-bookworm-slim\n', 'different Node.js releases (22.23.5, 22.23.4)'],
    ['FROM debian:bookworm-slim\n', 'no `FROM node:<version>` line'],
  ])('refuses %j', (dockerfile, message) => {
    expect(() => pinnedNodeRelease(dockerfile)).toThrow(message);
  });

  it("the repository's Dockerfile pins one exact release", () => {
    expect(imageNodeRelease()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('nodeRelease', () => {
  // A stand-in npm on PATH whose `pack` writes a tarball like the registry's node-<platform>-<arch> package, its
  // bin/node a script that prints `reports`; every call is counted in a file.
  let dir: string;
  let saved: { path?: string; cache?: string };
  const calls = () => (existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8').split('\n').filter(Boolean) : []);
  const cacheEntries = () => readdirSync(join(dir, 'cache', 'extended-deployment', 'lab'));

  function fakeNpm(reports: string, exitCode = 0): void {
    const pkg = join(dir, 'pkg', 'package', 'bin');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'node'), `#!/bin/sh\necho ${reports}\n`);
    chmodSync(join(pkg, 'node'), 0o755);
    const tar = spawnSync('tar', ['-czf', join(dir, 'node.tgz'), '-C', join(dir, 'pkg'), 'package']);
    expect(tar.status).toBe(0);
    const npm = join(dir, 'bin', 'npm');
    mkdirSync(join(dir, 'bin'), { recursive: true });
    // npm pack <spec> --pack-destination <dir> …
    writeFileSync(
      npm,
      `#!/bin/sh\necho "$*" >> ${join(dir, 'calls')}\n[ ${exitCode} -eq 0 ] || { echo "404 Not Found - $2" >&2; exit ${exitCode}; }\ncp ${join(dir, 'node.tgz')} "$4/node-pack.tgz"\n`,
    );
    chmodSync(npm, 0o755);
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'image-node-'));
    saved = { path: process.env.PATH, cache: process.env.XDG_CACHE_HOME };
    process.env.PATH = `${join(dir, 'bin')}${delimiter}${process.env.PATH ?? ''}`;
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
  });

  afterEach(() => {
    process.env.PATH = saved.path;
    if (saved.cache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved.cache;
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches the release once into the cache, then finds it there', () => {
    fakeNpm('v22.23.5');
    const logs: string[] = [];
    const binary = nodeRelease('22.23.5', (s) => logs.push(s));
    expect(binary).toBe(join(dir, 'cache', 'extended-deployment', 'lab', `node-v22.23.5-${process.platform}-${process.arch}`, 'bin', 'node'));
    expect(spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim()).toBe('v22.23.5');
    expect(calls()).toEqual([
      `pack node-${process.platform}-${process.arch}@22.23.5 --pack-destination ${binary.replace(/\/bin\/node$/, '')}.tmp-${process.pid} --silent --no-audit --no-fund`,
    ]);
    expect(logs).toEqual([`lab: fetching Node.js 22.23.5 from the npm registry (node-${process.platform}-${process.arch}@22.23.5)`]);
    // The tarball and the temp directory are gone; only the release's directory is left.
    expect(cacheEntries()).toEqual([`node-v22.23.5-${process.platform}-${process.arch}`]);
    expect(readdirSync(join(binary, '..', '..'))).toEqual(['bin']);

    expect(nodeRelease('22.23.5', (s) => logs.push(s))).toBe(binary);
    expect(calls()).toHaveLength(1);
  });

  it('refuses a package whose binary reports another release, and replaces a cached binary that does', () => {
    fakeNpm('v22.23.4');
    expect(() => nodeRelease('22.23.5', () => undefined)).toThrow('does not run or does not report v22.23.5');
    expect(cacheEntries()).toEqual([]);

    const cached = join(dir, 'cache', 'extended-deployment', 'lab', `node-v22.23.5-${process.platform}-${process.arch}`, 'bin');
    mkdirSync(cached, { recursive: true });
    writeFileSync(join(cached, 'node'), '#!/bin/sh\necho v22.23.4\n');
    chmodSync(join(cached, 'node'), 0o755);
    fakeNpm('v22.23.5');
    expect(
      spawnSync(
        nodeRelease('22.23.5', () => undefined),
        ['--version'],
        { encoding: 'utf8' },
      ).stdout.trim(),
    ).toBe('v22.23.5');
    expect(calls()).toHaveLength(2);
  });

  it('says what npm said when the registry has no such package, and leaves nothing behind', () => {
    fakeNpm('v22.23.5', 1);
    expect(() => nodeRelease('22.23.5', () => undefined)).toThrow(
      `npm pack node-${process.platform}-${process.arch}@22.23.5 failed (is there a package for this platform?): 404 Not Found - node-${process.platform}-${process.arch}@22.23.5`,
    );
    expect(cacheEntries()).toEqual([]);
  });
});
