import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { DeployRegion } from '../constructs/index.js';

const ARCH = 'kubernetes.io/arch';
const ZONE = 'topology.kubernetes.io/zone';
const POOL = 'extendeddeployment.io/pool';

/**
 * The cluster's regions, in one chart because DeployRegions are cluster-wide and shared by every application.
 * The agent counts a node in one region only, so each way of partitioning nodes gets its own pool of nodes: the
 * general pool is split by architecture, the API pool and the GPU pool by zone (pool label plus zone), and the
 * upstream sample's regions select `extendeddeployment.io/region`, which only that sample's nodes carry. Splitting
 * one pool two ways would put every node in two regions.
 */
export class Regions extends Chart {
  /** The general pool by architecture. */
  readonly amd64: DeployRegion;
  readonly arm64: DeployRegion;
  /** The API pool by zone. */
  readonly zoneA: DeployRegion;
  readonly zoneB: DeployRegion;
  readonly zoneC: DeployRegion;
  /** The tainted GPU pool by zone. */
  readonly gpuA: DeployRegion;
  readonly gpuB: DeployRegion;
  /** The upstream operator's sample regions, unchanged (examples/upstream-sample/ holds them as upstream's YAML). */
  readonly region1: DeployRegion;
  readonly region2: DeployRegion;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.amd64 = new DeployRegion(this, 'amd64', { matchLabels: { [ARCH]: 'amd64', [POOL]: 'general' } });
    this.arm64 = new DeployRegion(this, 'arm64', { matchLabels: { [ARCH]: 'arm64', [POOL]: 'general' } });
    this.zoneA = new DeployRegion(this, 'zone-a', { matchLabels: { [ZONE]: 'zone-a', [POOL]: 'api' } });
    this.zoneB = new DeployRegion(this, 'zone-b', { matchLabels: { [ZONE]: 'zone-b', [POOL]: 'api' } });
    this.zoneC = new DeployRegion(this, 'zone-c', { matchLabels: { [ZONE]: 'zone-c', [POOL]: 'api' } });
    const gpuToleration = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];
    this.gpuA = new DeployRegion(this, 'gpu-a', { matchLabels: { [POOL]: 'gpu', [ZONE]: 'zone-a' }, tolerations: gpuToleration });
    this.gpuB = new DeployRegion(this, 'gpu-b', { matchLabels: { [POOL]: 'gpu', [ZONE]: 'zone-b' }, tolerations: gpuToleration });
    this.region1 = new DeployRegion(this, 'region1', { matchLabels: { 'extendeddeployment.io/region': 'region1' } });
    this.region2 = new DeployRegion(this, 'region2', { matchLabels: { 'extendeddeployment.io/region': 'region2' } });
  }
}
