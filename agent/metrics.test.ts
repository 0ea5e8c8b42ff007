import { describe, expect, it } from 'vitest';
import { AgentMetrics } from './metrics.js';

describe('AgentMetrics', () => {
  it('labels the queue depth by controller: each controller has a queue of its own', async () => {
    const metrics = new AgentMetrics({ queueDepth: (controller) => (controller === 'extendeddeployment' ? 3 : 1) });
    const depth = (await metrics.registry.getSingleMetric('extendeddeployment_agent_queue_depth')?.get())?.values.map((v) => ({ ...v.labels, value: v.value }));
    expect(depth).toEqual([
      { controller: 'extendeddeployment', value: 3 },
      { controller: 'deployregion', value: 1 },
    ]);
  });

  it('counts analysis samples by result, every result present from the start', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    const samples = async () =>
      Object.fromEntries(
        ((await metrics.registry.getSingleMetric('extendeddeployment_analysis_samples_total')?.get())?.values ?? []).map((v) => [v.labels['result'], v.value]),
      );
    expect(await samples()).toEqual({ Success: 0, Failure: 0, NoData: 0, Error: 0 });
    metrics.countSamples([
      { metric: 'errors', verdict: 'Success' },
      { metric: 'latency', verdict: 'Success' },
      { metric: 'errors', verdict: 'Error' },
    ]);
    metrics.countSamples([{ metric: 'errors', verdict: 'NoData' }]);
    expect(await samples()).toEqual({ Success: 2, Failure: 0, NoData: 1, Error: 1 });
    expect(await metrics.registry.metrics()).toContain('extendeddeployment_analysis_samples_total{result="Success"} 2');
  });
});
