import { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { ExtendedDeployment } from '../constructs/index.js';
import { applicationNamespace } from './namespace.js';
import type { Regions } from './regions.js';

/** The StorageClass of the API pool's local disks: volumes an operator creates per node, bound where the pod runs. */
export const LOCAL_DISKS = 'local-ssd';

/**
 * A session store that keeps its data on a local disk per pod: StatefulSet regions (stable pod names, a claim per pod
 * made in the pod's zone) on the API pool's zones a and b. Zone b's disks are larger. Rollouts replace one pod at a time
 * from the highest ordinal, each group a step of the StatefulSet's partition; a replaced pod keeps its claim.
 */
export class SessionStore extends Chart {
  constructor(scope: Construct, id: string, regions: Regions) {
    super(scope, id);
    const namespace = 'sessions';
    applicationNamespace(this, namespace);
    new k8s.KubeStorageClass(this, 'local-disks', {
      metadata: { name: LOCAL_DISKS },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Retain',
    });
    // The governing headless Service: each pod is reachable as <pod>.sessions.
    new k8s.KubeService(this, 'service', {
      metadata: { name: 'sessions', namespace },
      spec: { clusterIp: 'None', selector: { app: 'sessions' }, ports: [{ name: 'redis', port: 6379 }] },
    });
    new ExtendedDeployment(this, 'sessions', {
      namespace,
      subsetType: 'StatefulSet',
      statefulSet: {
        serviceName: 'sessions',
        volumeClaimTemplates: [
          {
            name: 'data',
            spec: { accessModes: ['ReadWriteOnce'], storageClassName: LOCAL_DISKS, resources: { requests: { storage: k8s.Quantity.fromString('1Gi') } } },
          },
        ],
      },
      template: {
        metadata: { labels: { app: 'sessions' } },
        spec: {
          containers: [
            {
              name: 'redis',
              image: 'registry.example.com/cache/redis:7.4',
              ports: [{ name: 'redis', containerPort: 6379 }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
        },
      },
      regions: [
        { region: regions.zoneA, replicas: 2 },
        { region: regions.zoneB, replicas: 2, overrides: { volumeClaims: { data: { storage: '2Gi' } } } },
      ],
      strategy: { minReadySeconds: 5 },
    });
  }
}
