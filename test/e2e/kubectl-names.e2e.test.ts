// The names kubectl accepts for the CRDs, asked of the lab's real kubectl: the singular and short names find one kind
// (a category named like a resource once made `kubectl get extendeddeployment web` a get of both kinds), and the
// category lists both. The CRDs are applied as core generates them now, so the test holds before crds/ is regenerated.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect } from 'vitest';
import { CRD_CATEGORY, customResourceDefinitions } from '../../core/crd.js';
import { binariesReady, binDirFor, readPins } from '../cluster/build.js';
import { kubeconfigPath } from '../cluster/lab.js';
import { clients, condition, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { deployRegions, ED_NAME, extendedDeployment, installCrds } from './rollout-kit.js';

/** The parts of a CustomResourceDefinition the test waits on. */
type Crd = KubernetesObject & { status?: { acceptedNames?: { categories?: string[] }; conditions?: { type: string; status: string }[] } };

const kubectlBin = join(binDirFor(readPins()), 'kubectl');
// A discovery cache of its own: kubectl caches discovery for hours, and a cache from before would hold the old names.
let cacheDir = '';

beforeAll(async () => {
  if (!binariesReady(binDirFor(readPins()))) throw new Error(`the lab's kubectl is missing (${kubectlBin}): run npm run lab:build`);
  await installCrds();
  for (const { crd } of customResourceDefinitions()) await serverSideApply(crd as unknown as KubernetesObject);
  for (const { crd } of customResourceDefinitions()) {
    const name = (crd['metadata'] as { name: string }).name;
    await waitFor(`CRD ${name} Established with category ${CRD_CATEGORY}`, async () => {
      const got = await clients().objects.read<Crd>({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
      return condition(got, 'Established')?.status === 'True' && got.status?.acceptedNames?.categories?.includes(CRD_CATEGORY);
    });
  }
  cacheDir = mkdtempSync(join(tmpdir(), 'kubectl-cache-'));
});

afterAll(() => {
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});

/** The lab's kubectl: exit code and output. */
function kubectl(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(kubectlBin, ['--kubeconfig', kubeconfigPath(), '--cache-dir', cacheDir, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('kubectl get finds one kind by singular, plural and short name, and both kinds by the category', async ({ ns }) => {
  const suffix = uniqueName('k').slice(2);
  const regions = deployRegions(suffix);
  const region = regions[0]?.metadata?.name ?? '';
  try {
    for (const r of regions) await serverSideApply(r);
    await serverSideApply(extendedDeployment(ns, suffix, { image: 'registry.k8s.io/pause:3.10', replicas: [1, 1, 1] }) as KubernetesObject);
    const ed = `extendeddeployment.extendeddeployment.io/${ED_NAME}`;
    const dr = `deployregion.extendeddeployment.io/${region}`;
    const cases = [
      { args: ['get', 'extendeddeployment', ED_NAME, '-n', ns], names: [ed] },
      { args: ['get', 'extendeddeployments', ED_NAME, '-n', ns], names: [ed] },
      { args: ['get', 'ed', ED_NAME, '-n', ns], names: [ed] },
      { args: ['get', 'deployregion', region], names: [dr] },
      { args: ['get', 'deployregions', region], names: [dr] },
      { args: ['get', 'dr', region], names: [dr] },
    ];
    // Discovery may serve the updated names a moment after the CRD is Established.
    await waitFor(
      `kubectl get ${CRD_CATEGORY} to list both kinds`,
      async () => {
        const r = kubectl('get', CRD_CATEGORY, '-n', ns, '-o', 'name');
        return r.code === 0 && r.out.includes(ed) && r.out.includes(dr);
      },
      { describe: async () => kubectl('get', CRD_CATEGORY, '-n', ns, '-o', 'name') },
    );
    for (const c of cases) {
      const r = kubectl(...c.args, '-o', 'name');
      expect({ args: c.args.join(' '), code: r.code, err: r.err, names: r.out.trim().split('\n') }).toEqual({
        args: c.args.join(' '),
        code: 0,
        err: '',
        names: c.names,
      });
    }
    // The table kubectl prints for people too (printer columns), one kind only.
    const table = kubectl('get', 'extendeddeployment', ED_NAME, '-n', ns);
    expect(table.code, table.err).toBe(0);
    expect(table.out.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+GROUPS\s+OVERVIEW\s+AGE$/);
  } finally {
    for (const r of regions)
      await clients()
        .objects.delete(r)
        .catch(() => undefined);
  }
});
