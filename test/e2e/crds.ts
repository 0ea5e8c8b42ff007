// Installs the generated CRDs once per test run, as a GitOps tool would: server-side apply of crds/ as written.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../cluster/build.js';
import { clients, condition, errorMessage, serverSideApply, waitFor } from './helpers.js';

let crdsInstalled: Promise<void> | undefined;
/** Installs crds/ (server-side apply, sent as-is) once per run and waits until they are Established and served. */
export function installCrds(): Promise<void> {
  crdsInstalled ??= (async () => {
    const dir = join(repoRoot, 'crds');
    const crds = readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as KubernetesObject))
      .filter((o) => o?.kind === 'CustomResourceDefinition');
    for (const crd of crds) {
      try {
        await serverSideApply(crd);
      } catch (e) {
        throw new Error(`CRD ${crd.metadata?.name} rejected by the API server: ${errorMessage(e)}`, { cause: e });
      }
    }
    for (const crd of crds) {
      await waitFor(`CRD ${crd.metadata?.name} Established`, async () => {
        const name = crd.metadata?.name ?? '';
        const got = await clients().objects.read({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
        return condition(got as never, 'Established')?.status === 'True';
      });
    }
    // A freshly started API server can report a CRD Established a few seconds before discovery serves its group;
    // clients that look kinds up through discovery (server-side apply here, informers in the agent) wait for both.
    for (const crd of crds) {
      const spec = (crd as KubernetesObject & { spec: { group: string; names: { kind: string }; versions: { name: string }[] } }).spec;
      for (const version of spec.versions) {
        await waitFor(`${spec.names.kind} ${spec.group}/${version.name} served`, async () => {
          try {
            return (await clients().objects.resourceFor(`${spec.group}/${version.name}`, spec.names.kind)) !== undefined;
          } catch {
            return false;
          }
        });
      }
    }
  })();
  return crdsInstalled;
}
