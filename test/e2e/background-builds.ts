// The e2e suites that need a build beyond the lab's own (a GitOps engine, the gateway) run last, and those builds run
// in the background meanwhile, at the lowest CPU priority: most suites spend their time waiting for kwok and the
// controllers, so a cold CI overlaps the builds' minutes with them instead of adding them (test/cluster/README.md).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { repoRoot, type BuildName } from '../cluster/build.js';
import { labDir } from '../cluster/lab.js';

/** Suites that need builds of their own, in the order they run; the builds are made in the order they are first needed. */
const SUITE_BUILDS: readonly (readonly [suite: string, builds: readonly BuildName[]])[] = [
  // The GitOps suites' mode Weighted test needs a gateway to accept the agent's route.
  ['gitops-argocd.e2e.test.ts', ['argocd', 'traefik']],
  ['gitops-flux.e2e.test.ts', ['flux', 'traefik']],
  ['traffic-lab.e2e.test.ts', ['traefik']],
  ['traffic.e2e.test.ts', ['traefik']],
];

const pidPath = () => join(labDir(), 'background-builds.pid');
/** Outside `logs/`, which every lab start empties. */
const backgroundBuildsLog = () => join(labDir(), 'background-builds.log');

/**
 * Starts `lab:build lab <builds…>` niced in its own process group (the lab first: the global setup needs it at once
 * and would otherwise wait behind the others for the build lock). Its output goes to `backgroundBuildsLog()`.
 */
function startBackgroundBuilds(builds: readonly BuildName[]): void {
  mkdirSync(labDir(), { recursive: true });
  const out = openSync(backgroundBuildsLog(), 'w');
  const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
  const child = spawn('nice', ['-n', '19', tsx, join(repoRoot, 'test', 'cluster', 'cli.ts'), 'build', 'lab', ...builds], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  writeFileSync(pidPath(), String(child.pid));
  console.error(`e2e: building ${builds.join(', ')} in the background at the lowest CPU priority (log: ${backgroundBuildsLog()})`);
}

/** Stops the background builds if they still run (a suite that needs one waits for it under the build lock instead). */
export function stopBackgroundBuilds(): void {
  if (!existsSync(pidPath())) return;
  const pid = Number(readFileSync(pidPath(), 'utf8'));
  rmSync(pidPath(), { force: true });
  try {
    process.kill(-pid, 'SIGTERM');
    console.error('e2e: stopped the background builds (unfinished; the next run starts them again)');
  } catch {
    /* already done */
  }
}

/**
 * `sorted` with the suites of `SUITE_BUILDS` moved to the end in its order, and the builds they need, in that order;
 * none when no other suite runs first (nothing to overlap them with: the suites build what they need themselves).
 */
export function buildsLast<T>(sorted: readonly T[], path: (file: T) => string): { order: T[]; builds: BuildName[] } {
  const rank = (f: T) => SUITE_BUILDS.findIndex(([suite]) => basename(path(f)) === suite);
  const first = sorted.filter((f) => rank(f) < 0);
  const last = sorted.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b));
  const builds = first.length > 0 ? [...new Set(last.flatMap((f) => SUITE_BUILDS[rank(f)]![1]))] : [];
  return { order: [...first, ...last], builds };
}

/** vitest's order with `buildsLast`; starts the builds it names in the background. */
export class BuildsLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { order, builds } = buildsLast(await super.sort(files), (f) => f.moduleId);
    if (builds.length > 0) startBackgroundBuilds(builds);
    return order;
  }
}
