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
});
