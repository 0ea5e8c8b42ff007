// Every object in dist/ must apply as it is, through any GitOps tool. Flux (`namespace not specified`) and Argo CD
// without destination.namespace (`InvalidSpecError: Namespace for ... is missing`) have no kubectl-style fallback to
// the default namespace, so every namespaced object must name its namespace. Cluster-scoped objects must name none.
// Scope is decided by explicit lists, not guessed: a kind in neither list fails until someone classifies it.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const distDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/** Kinds as `Kind.group` (core kinds without a group), as `kubectl api-resources` names them. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole.rbac.authorization.k8s.io',
  'ClusterRoleBinding.rbac.authorization.k8s.io',
  'CustomResourceDefinition.apiextensions.k8s.io',
  'ValidatingAdmissionPolicy.admissionregistration.k8s.io',
  'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io',
  'DeployRegion.extendeddeployment.io',
  'StorageClass.storage.k8s.io',
]);

const NAMESPACED = new Set([
  'ExtendedDeployment.extendeddeployment.io',
  'ReplicaSet.apps',
  'Deployment.apps',
  'StatefulSet.apps',
  'Service',
  'ServiceAccount',
  'Role.rbac.authorization.k8s.io',
  'RoleBinding.rbac.authorization.k8s.io',
  'PodDisruptionBudget.policy',
]);

interface DistObject {
  readonly file: string;
  /** Parse errors of the document; an object that does not parse is still listed, to fail the first test. */
  readonly errors: readonly string[];
  readonly kind: string;
  readonly name: string;
  readonly namespace: unknown;
}

/** `Kind.group` of an apiVersion and kind: `apps/v1` + `ReplicaSet` is `ReplicaSet.apps`, `v1` + `Service` is `Service`. */
function qualifiedKind(apiVersion: string, kind: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
}

const distFiles = () =>
  readdirSync(distDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

/** Every document of every dist/*.yaml file. */
function distObjects(): DistObject[] {
  return distFiles().flatMap((file) =>
    parseAllDocuments(readFileSync(join(distDir, file), 'utf8')).map((doc) => {
      const errors = doc.errors.map((e) => e.message);
      const object = (errors.length === 0 ? doc.toJS() : null) as {
        apiVersion?: unknown;
        kind?: unknown;
        metadata?: { name?: unknown; namespace?: unknown };
      } | null;
      if (object === null || typeof object !== 'object') errors.push('is not an object');
      return {
        file,
        errors,
        kind: qualifiedKind(String(object?.apiVersion), String(object?.kind)),
        name: String(object?.metadata?.name),
        namespace: object?.metadata?.namespace,
      };
    }),
  );
}

const describeObject = (o: DistObject) => `${o.file}: ${o.kind} ${o.name}`;

describe('dist/', () => {
  const objects = distObjects();

  it('holds objects in every file, each a YAML object that parses', () => {
    expect(new Set(objects.map((o) => o.file))).toEqual(new Set(distFiles()));
    expect(objects.filter((o) => o.errors.length > 0).map((o) => `${o.file}: ${o.errors.join('; ')}`)).toEqual([]);
  });

  it('holds only kinds known to be namespaced or cluster-scoped (classify a new kind in this test)', () => {
    const unclassified = objects.filter((o) => !NAMESPACED.has(o.kind) && !CLUSTER_SCOPED.has(o.kind)).map(describeObject);
    expect(unclassified).toEqual([]);
  });

  it('names the namespace of every namespaced object', () => {
    const missing = objects.filter((o) => NAMESPACED.has(o.kind) && (typeof o.namespace !== 'string' || o.namespace === '')).map(describeObject);
    expect(missing).toEqual([]);
  });

  it('names no namespace on a cluster-scoped object', () => {
    const namespaced = objects.filter((o) => CLUSTER_SCOPED.has(o.kind) && o.namespace !== undefined).map(describeObject);
    expect(namespaced).toEqual([]);
  });
});
