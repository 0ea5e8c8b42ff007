import { Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { ExtendedDeployment } from '../constructs/index.js';
import { applicationNamespace } from './namespace.js';
import type { Regions } from './regions.js';

/**
 * A model server on a tainted GPU pool in two zones. Image-only upgrades swap the image inside running pods (no
 * rescheduling, the GPU stays allocated); old pods go first so the pool never needs a spare GPU; every group waits
 * for approval (`edctl approve`, or `strategy.approval` in Git).
 */
export class GpuInference extends Chart {
  constructor(scope: Construct, id: string, regions: Regions) {
    super(scope, id);
    applicationNamespace(this, 'ml');
    const gpu = k8s.Quantity.fromNumber(1);
    new ExtendedDeployment(this, 'llm-server', {
      namespace: 'ml',
      replicas: 4,
      template: {
        metadata: { labels: { app: 'llm-server' } },
        spec: {
          containers: [
            {
              name: 'server',
              image: 'registry.example.com/ml/llm-server:0.9.1',
              args: ['--model=/models/chat-7b'],
              resources: { requests: { 'nvidia.com/gpu': gpu, cpu: k8s.Quantity.fromString('2') }, limits: { 'nvidia.com/gpu': gpu } },
            },
          ],
        },
      },
      regions: [
        { region: regions.gpuA, replicas: '50%' },
        { region: regions.gpuB, replicas: '50%' },
      ],
      strategy: {
        updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 10 },
        upgradeMode: 'scaleInPriority',
        needWaitingForConfirm: true,
        minReadySeconds: 30,
        syncWaitTimeout: 900,
      },
    });
  }
}
