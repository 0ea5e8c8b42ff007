// The rendered artefacts against a real API server: crds/ install and are Established; every object of every file in
// dist/ is accepted by server-side apply (this replaces library-based schema validation); each region's pods land
// only on that region's nodes and run (a StatefulSet's on local disks the test provides); invalid ExtendedDeployments are rejected by the CRD's validation.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, test as plainTest } from 'vitest';
import { repoRoot } from '../cluster/build.js';
import { nodeInRegion, type RegionSelector } from '../../core/region-selector.js';
import {
  clients,
  condition,
  createNamespace,
  deleteNamespace,
  errorCode,
  errorMessage,
  podReady,
  serverSideApply,
  test,
  uniqueName,
  waitFor,
} from './helpers.js';
import { provideLocalDisks, removeLocalDisks } from './local-disks.js';

const API_GROUP = 'extendeddeployment.io';
const REGION_LABEL = `${API_GROUP}/region`;

interface Obj extends KubernetesObject {
  // Any kind's spec (CRDs, workloads, ExtendedDeployments), read by path and broken on purpose with values of the
  // wrong type: no type short of any admits that.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  [k: string]: unknown;
}
interface Doc {
  file: string;
  obj: Obj;
}

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => join(dir, f))
    .sort();
}

function loadDocs(file: string): Doc[] {
  const docs: Doc[] = [];
  for (const d of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}`);
    const obj = d.toJS() as Obj | null;
    if (obj && typeof obj === 'object') docs.push({ file: file.startsWith(repoRoot) ? relative(repoRoot, file) : file, obj });
  }
  return docs;
}

// E2E_CRDS_DIR: try candidate CRDs (e.g. a locally fixed copy) without touching crds/.
const crdFiles = yamlFiles(process.env.E2E_CRDS_DIR || join(repoRoot, 'crds'));
const distFiles = yamlFiles(join(repoRoot, 'dist'));
const crdDocs = crdFiles.flatMap(loadDocs).filter((d) => d.obj.kind === 'CustomResourceDefinition');
const distDocs = distFiles.flatMap(loadDocs);
const regionDocs = distDocs.filter((d) => d.obj.kind === 'DeployRegion');
const edDocs = distDocs.filter((d) => d.obj.kind === 'ExtendedDeployment');

const id = (o: KubernetesObject) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
const groupOf = (apiVersion = '') => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');
/** API groups the lab must serve; objects of other groups (Argo CD, Flux, ...) are skipped when not installed. */
const mustServe = (apiVersion?: string) =>
  ['', 'apps', 'policy', 'rbac.authorization.k8s.io', 'coordination.k8s.io', API_GROUP].includes(groupOf(apiVersion)) ||
  groupOf(apiVersion).endsWith('.k8s.io');

let crdsInstalled: Promise<void> | undefined;
/** Installs crds/ once per run (server-side apply) and waits until every CRD is Established. */
function installCrds(): Promise<void> {
  crdsInstalled ??= (async () => {
    const failures: string[] = [];
    for (const d of crdDocs) {
      try {
        await serverSideApply(d.obj);
      } catch (e) {
        failures.push(`${d.file}: ${id(d.obj)}: ${errorMessage(e)}`);
      }
    }
    if (failures.length) throw new Error(`CRDs rejected by the API server:\n${failures.join('\n')}`);
    for (const d of crdDocs) {
      const name = d.obj.metadata!.name!;
      await waitFor(`CRD ${name} Established`, async () => {
        const crd = await clients().objects.read<Obj>({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
        return condition(crd as never, 'Established')?.status === 'True';
      });
    }
  })();
  return crdsInstalled;
}

/** Is this kind namespaced? undefined when the API server does not serve it. */
async function namespaced(o: KubernetesObject): Promise<boolean | undefined> {
  const r = await clients().objects.resourceFor(o.apiVersion!, o.kind!);
  return r?.namespaced;
}

const appliedClusterObjects = new Map<string, KubernetesObject>();

describe('rendered artefacts on a real API server', () => {
  afterAll(async () => {
    for (const o of appliedClusterObjects.values()) {
      try {
        await clients().objects.delete(o);
      } catch {
        /* already gone */
      }
    }
  });

  plainTest.skipIf(crdDocs.length === 0)(`crds/ (${crdDocs.length} CRDs) are accepted and Established`, async () => {
    await installCrds();
    for (const d of crdDocs) {
      const served = await clients().objects.resourceFor(`${d.obj.spec.group}/${d.obj.spec.versions[0].name}`, d.obj.spec.names.kind);
      expect(served, `${d.obj.spec.names.kind} served`).toBeDefined();
    }
  });

  plainTest.skipIf(regionDocs.length === 0 || crdDocs.length === 0)(`every DeployRegion in dist/ (${regionDocs.length}) is accepted`, async () => {
    await installCrds();
    const failures: string[] = [];
    for (const d of regionDocs) {
      try {
        await serverSideApply(d.obj);
        appliedClusterObjects.set(id(d.obj), d.obj);
      } catch (e) {
        failures.push(`${d.file}: ${id(d.obj)}: ${errorMessage(e)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  if (distFiles.length === 0) {
    plainTest.skip('dist/ has no rendered files yet', () => {});
  }

  for (const file of distFiles) {
    const rel = relative(repoRoot, file);
    plainTest(`${rel}: every object is accepted; regional pods run only on their region's nodes`, async () => {
      if (crdDocs.length) await installCrds();
      const docs = distDocs.filter((d) => d.file === rel);
      const nsMap = new Map<string, string>();
      const failures: string[] = [];
      const skipped: string[] = [];
      const workloads: Obj[] = [];
      // The lab has no volume provisioner: local disks for the claims of StatefulSets, as an operator would make them.
      const disks = await provideLocalDisks(
        docs.map((d) => d.obj),
        1,
      );
      try {
        for (const { obj: original } of docs) {
          if (original.kind === 'Namespace') continue; // replaced by a per-test namespace
          if (original.kind === 'DeployRegion' && appliedClusterObjects.has(id(original))) continue;
          const obj = structuredClone(original);
          let isNamespaced: boolean | undefined;
          try {
            isNamespaced = await namespaced(obj);
          } catch {
            isNamespaced = undefined;
          }
          if (isNamespaced === undefined) {
            if (mustServe(obj.apiVersion)) failures.push(`${id(obj)}: kind ${obj.apiVersion}/${obj.kind} is not served by the API server`);
            else skipped.push(`${id(obj)} (${obj.apiVersion} not installed in the lab)`);
            continue;
          }
          if (isNamespaced) {
            const orig = obj.metadata?.namespace ?? 'default';
            if (!nsMap.has(orig)) nsMap.set(orig, await createNamespace(`e2e-${orig}`.slice(0, 50)));
            obj.metadata = { ...obj.metadata, namespace: nsMap.get(orig)! };
          }
          try {
            await serverSideApply(obj);
            if (!isNamespaced) appliedClusterObjects.set(id(obj), obj);
            if (obj.kind === 'ReplicaSet' || obj.kind === 'Deployment' || obj.kind === 'StatefulSet') workloads.push(obj);
          } catch (e) {
            failures.push(`${id(original)}: ${errorMessage(e)}`);
          }
        }
        if (skipped.length) console.warn(`${rel}: skipped (API not installed in the lab): ${skipped.join(', ')}`);
        expect(failures, 'objects rejected by the API server').toEqual([]);

        // Regional workloads: pods are scheduled only onto their region's nodes, and run.
        const { core } = clients();
        const nodes = (await core.listNode()).items;
        for (const w of workloads) {
          const region = (w.spec?.selector?.matchLabels?.[REGION_LABEL] ?? w.metadata?.labels?.[REGION_LABEL]) as string | undefined;
          const want = (w.spec?.replicas as number | undefined) ?? 1;
          const selector = Object.entries((w.spec?.selector?.matchLabels ?? {}) as Record<string, string>)
            .map(([k, v]) => `${k}=${v}`)
            .join(',');
          const gated = ((w.spec?.template?.spec?.readinessGates ?? []) as unknown[]).length > 0;
          const pods: V1Pod[] = await waitFor(
            `${id(w)}: ${want} pod(s) Running with containers ready${gated ? ' (Ready waits for readiness gates)' : ' and Ready'}`,
            async () => {
              const list = (await core.listNamespacedPod({ namespace: w.metadata!.namespace!, labelSelector: selector })).items;
              const ok = list.filter(
                (p) => p.status?.phase === 'Running' && condition(p as never, 'ContainersReady')?.status === 'True' && (gated || podReady(p)),
              );
              return ok.length >= want ? ok : undefined;
            },
            {
              timeoutMs: 120_000,
              describe: async () =>
                (await core.listNamespacedPod({ namespace: w.metadata!.namespace!, labelSelector: selector })).items.map((p) => ({
                  name: p.metadata?.name,
                  node: p.spec?.nodeName,
                  phase: p.status?.phase,
                  conditions: p.status?.conditions,
                })),
            },
          );
          if (gated) {
            // readiness gates are set by the agent only: without it, a gated pod must not be Ready
            for (const p of pods) expect(podReady(p), `${p.metadata?.name} Ready without its gates`).toBe(false);
          }
          if (!region) continue;
          const dr = regionDocs.find((d) => d.obj.metadata?.name === region)?.obj;
          expect(dr, `DeployRegion ${region} (referenced by ${id(w)}) rendered in dist/`).toBeDefined();
          const nodeSelection = (dr!.spec ?? {}) as RegionSelector;
          const regionNodes = nodes.filter((n) => nodeInRegion(n.metadata?.labels ?? {}, nodeSelection)).map((n) => n.metadata!.name!);
          expect(regionNodes.length, `lab nodes in region ${region} (${JSON.stringify(nodeSelection)})`).toBeGreaterThan(0);
          for (const p of pods) {
            expect(regionNodes, `${p.metadata?.name} of ${id(w)} on node ${p.spec?.nodeName}`).toContain(p.spec?.nodeName);
          }
        }
      } finally {
        for (const ns of nsMap.values()) await deleteNamespace(ns);
        await removeLocalDisks(disks);
      }
    });
  }

  describe('invalid ExtendedDeployments are rejected by the API server', () => {
    const base = edDocs[0]?.obj;
    const cases: { name: string; mutate: (ed: Obj) => void; expect: RegExp }[] = [
      {
        name: 'a region percentage over 100% ("150%")',
        mutate: (ed) => {
          ed.spec.replicas = ed.spec.replicas ?? 4;
          ed.spec.regions[0].replicas = '150%';
        },
        expect: /replicas/,
      },
      {
        name: 'a replica count that is neither an integer nor a percentage ("lots")',
        mutate: (ed) => {
          ed.spec.replicas = ed.spec.replicas ?? 4;
          ed.spec.regions[0].replicas = 'lots';
        },
        expect: /replicas/,
      },
      {
        name: 'overriders naming a region that is not in spec.regions',
        mutate: (ed) => {
          ed.spec.overriders = [{ name: 'no-such-region', overriders: [{ op: 'replace', path: '/spec/containers/0/image', value: 'x:1' }] }];
        },
        expect: /overriders|region/,
      },
      {
        name: 'the same region listed twice',
        mutate: (ed) => {
          ed.spec.regions = [ed.spec.regions[0], structuredClone(ed.spec.regions[0])];
        },
        expect: /region/,
      },
    ];

    function candidate(ns: string): Obj {
      const ed = structuredClone(base!);
      ed.metadata = { name: uniqueName('invalid'), namespace: ns, labels: ed.metadata?.labels ?? {} };
      return ed;
    }

    test.skipIf(!base || crdDocs.length === 0)('control: an unmodified rendered ExtendedDeployment is accepted', async ({ ns }) => {
      await installCrds();
      const ed = candidate(ns);
      await serverSideApply(ed);
    });

    for (const c of cases) {
      test.skipIf(!base || crdDocs.length === 0)(`rejects ${c.name}`, async ({ ns }) => {
        await installCrds();
        const ed = candidate(ns);
        c.mutate(ed);
        let error: unknown;
        try {
          await serverSideApply(ed);
        } catch (e) {
          error = e;
        }
        expect(error, 'the API server accepted an invalid ExtendedDeployment').toBeDefined();
        expect(errorCode(error)).toBe(422);
        const message = errorMessage(error);
        console.log(`rejected (${c.name}): ${message}`);
        expect(message).toMatch(/ExtendedDeployment/);
        expect(message).toMatch(c.expect);
      });
    }
  });
});
