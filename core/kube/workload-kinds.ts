import type { ExtendedDeploymentSpec } from '../api/extended-deployment.js';
import type { WorkloadKind, WorkloadObject, Workloads } from './objects.js';

/** The kind of an ExtendedDeployment's regional workloads: InplaceSet regions are ReplicaSets. */
export function workloadKindOf(subsetType: ExtendedDeploymentSpec['subsetType']): WorkloadKind {
  return subsetType === 'InplaceSet' ? 'ReplicaSet' : subsetType;
}

/** The cached workloads of one kind. */
export function workloadsOfKind(workloads: Workloads, kind: WorkloadKind): readonly WorkloadObject[] {
  if (kind === 'Deployment') return workloads.deployments;
  return kind === 'StatefulSet' ? (workloads.statefulSets ?? []) : workloads.replicaSets;
}

/** The name of a region's workload: `<ed>-<region>`. */
export function workloadName(ed: string, region: string): string {
  return `${ed}-${region}`;
}
