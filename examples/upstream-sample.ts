import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ExtendedDeployment } from '../constructs/index.js';
import type { Regions } from './regions.js';

/**
 * The upstream operator's sample as a construct. examples/upstream-sample/ holds the same thing as plain YAML;
 * `edctl render` of that folder gives the same ExtendedDeployment and ReplicaSets as this chart.
 */
export class UpstreamSample extends Chart {
  constructor(scope: Construct, id: string, regions: Regions) {
    super(scope, id);
    new ExtendedDeployment(this, 'extendeddeployment-sample', {
      historyLimit: 10,
      selector: { matchLabels: { app: 'test' } },
      strategy: {
        batchSize: 2,
        minReadySeconds: 10,
        needWaitingForConfirm: false,
        rolloutStrategy: 'Beta',
        updateStrategy: { gracePeriodSeconds: 1, type: 'InPlaceIfPossible' },
      },
      template: {
        metadata: { labels: { app: 'test' } },
        spec: {
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
          containers: [{ name: 'contaner1', image: 'alpine', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 100000'] }],
        },
      },
      regions: [
        { region: regions.region1, replicas: 1, patches: [{ path: '/spec/containers/0/image', op: 'replace', value: 'busybox' }] },
        { region: regions.region2, replicas: 1 },
      ],
    });
  }
}
