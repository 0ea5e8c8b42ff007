import { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { ExtendedDeployment, type StrategyProps } from '../constructs/index.js';
import { applicationNamespace } from './namespace.js';
import type { Regions } from './regions.js';

/** What a release of the web service changes: the next commit of the GitOps end-to-end suites renders one. */
export interface MultiArchWebRelease {
  /** Image tag, for both architectures (the arm64 image is `<tag>-arm64`). Default: 1.4.2. */
  readonly version?: string;
  /** Strategy fields to set on top of the example's. */
  readonly strategy?: StrategyProps;
  /** Pods of the amd64 region that stay on the revision they ran (a grey phase). Default: none. */
  readonly amd64Partition?: number;
}

/**
 * A web service on amd64 and arm64 nodes, with a per-architecture image. Four replicas on amd64, two on arm64;
 * each group updates half of a region's pods, new pods first.
 */
export class MultiArchWeb extends Chart {
  constructor(scope: Construct, id: string, regions: Regions, release: MultiArchWebRelease = {}) {
    super(scope, id);
    const version = release.version ?? '1.4.2';
    applicationNamespace(this, 'shop');
    new ExtendedDeployment(this, 'web', {
      namespace: 'shop',
      replicas: 6,
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: `registry.example.com/shop/web:${version}`,
              ports: [{ name: 'http', containerPort: 8080 }],
              resources: { requests: { cpu: k8s.Quantity.fromString('250m'), memory: k8s.Quantity.fromString('256Mi') } },
            },
          ],
        },
      },
      regions: [
        { region: regions.amd64, replicas: 4, ...(release.amd64Partition !== undefined && { partition: release.amd64Partition }) },
        { region: regions.arm64, replicas: 2, overrides: { images: { web: `registry.example.com/shop/web:${version}-arm64` } } },
      ],
      strategy: { rolloutStrategy: 'Group', batchSize: '50%', ...release.strategy },
    });
  }
}
