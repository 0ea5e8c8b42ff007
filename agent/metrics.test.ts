import { describe, expect, it } from 'vitest';
import { AgentMetrics, EVENT_LOOP_SAMPLE_MS } from './metrics.js';

describe('AgentMetrics', () => {
  it('samples the event loop delay every EVENT_LOOP_SAMPLE_MS, not every 10 ms: an idle agent is not woken 100 times a second', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0, defaultMetrics: true });
    // prom-client sets every delay figure, and starts the histogram afresh, when nodejs_eventloop_lag_seconds is read.
    const meanDelay = async () => {
      await metrics.registry.getSingleMetric('nodejs_eventloop_lag_seconds')?.get();
      return (await metrics.registry.getSingleMetric('nodejs_eventloop_lag_mean_seconds')?.get())?.values[0]?.value;
    };
    await meanDelay();
    await new Promise((resolve) => setTimeout(resolve, EVENT_LOOP_SAMPLE_MS * 6));
    const mean = await meanDelay();
    // Each sample is the time between two ticks of the sampling timer, never shorter on average than its interval.
    expect(mean).toBeGreaterThanOrEqual((EVENT_LOOP_SAMPLE_MS * 0.9) / 1000);
  });

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
