import { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { ExtendedDeployment } from '../constructs/index.js';
import { applicationNamespace } from './namespace.js';
import type { Regions } from './regions.js';

/**
 * An API on the API pool's nodes, spread over three zones by percentage, with at least two replicas per zone so that
 * losing one pod never empties a zone. Zones roll one after another, in declared order.
 */
export class ZonalApi extends Chart {
  constructor(scope: Construct, id: string, regions: Regions) {
    super(scope, id);
    applicationNamespace(this, 'payments');
    new ExtendedDeployment(this, 'api', {
      namespace: 'payments',
      replicas: 10,
      template: {
        metadata: { labels: { app: 'payments-api' } },
        spec: {
          containers: [
            {
              name: 'api',
              image: 'registry.example.com/payments/api:2.8.0',
              env: [{ name: 'LOG_LEVEL', value: 'info' }],
              readinessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromNumber(8080) } },
            },
          ],
        },
      },
      regions: [
        { region: regions.zoneA, replicas: '50%', minReplicas: 2 },
        { region: regions.zoneB, replicas: '30%', minReplicas: 2 },
        { region: regions.zoneC, replicas: '20%', minReplicas: 2, overrides: { env: { api: { LOG_LEVEL: 'debug' } } } },
      ],
      strategy: { regionOrder: 'Sequential', batchSize: 2, minReadySeconds: 10 },
    });
  }
}
