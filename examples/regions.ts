import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { DeployRegion } from '../constructs/index.js';

const ARCH = 'kubernetes.io/arch';
const ZONE = 'topology.kubernetes.io/zone';
const POOL = 'extendeddeployment.io/pool';

/**
 * The cluster's regions, in one chart because DeployRegions are cluster-wide and shared by every application.
 * General-purpose and GPU nodes are told apart by a pool label, so a CPU region never counts GPU nodes.
 */
export class Regions extends Chart {
  readonly amd64: DeployRegion;
  readonly arm64: DeployRegion;
  readonly zoneA: DeployRegion;
  readonly zoneB: DeployRegion;
  readonly zoneC: DeployRegion;
  readonly gpuA: DeployRegion;
  readonly gpuB: DeployRegion;
  /** The upstream operator's sample regions. */
  readonly region1: DeployRegion;
  readonly region2: DeployRegion;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.amd64 = new DeployRegion(this, 'amd64', { matchLabels: { [ARCH]: 'amd64', [POOL]: 'general' } });
    this.arm64 = new DeployRegion(this, 'arm64', { matchLabels: { [ARCH]: 'arm64', [POOL]: 'general' } });
    this.zoneA = new DeployRegion(this, 'zone-a', { matchLabels: { [ZONE]: 'zone-a', [POOL]: 'general' } });
    this.zoneB = new DeployRegion(this, 'zone-b', { matchLabels: { [ZONE]: 'zone-b', [POOL]: 'general' } });
    this.zoneC = new DeployRegion(this, 'zone-c', { matchLabels: { [ZONE]: 'zone-c', [POOL]: 'general' } });
    const gpuToleration = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];
    this.gpuA = new DeployRegion(this, 'gpu-a', { matchLabels: { [POOL]: 'gpu', [ZONE]: 'zone-a' }, tolerations: gpuToleration });
    this.gpuB = new DeployRegion(this, 'gpu-b', { matchLabels: { [POOL]: 'gpu', [ZONE]: 'zone-b' }, tolerations: gpuToleration });
    this.region1 = new DeployRegion(this, 'region1', { matchLabels: { 'extendeddeployment.io/region': 'region1' } });
    this.region2 = new DeployRegion(this, 'region2', { matchLabels: { 'extendeddeployment.io/region': 'region2' } });
  }
}
