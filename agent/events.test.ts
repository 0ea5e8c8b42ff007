import { describe, expect, it } from 'vitest';
import { eventFor, REPORTING_COMPONENT } from './events.js';

describe('eventFor', () => {
  const ed = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', metadata: { name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: '7' } };
  const now = new Date(Date.UTC(2026, 0, 1));

  it('builds a core/v1 Event about the ExtendedDeployment', () => {
    expect(eventFor(ed, { type: 'Normal', reason: 'GroupStarted', message: 'group 2 of 3 started' }, 'agent-1', now, 'abc')).toEqual({
      metadata: { name: 'web.abc', namespace: 'shop' },
      involvedObject: { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: '7' },
      type: 'Normal',
      reason: 'GroupStarted',
      message: 'group 2 of 3 started',
      source: { component: REPORTING_COMPONENT },
      reportingComponent: 'extendeddeployment-agent',
      reportingInstance: 'agent-1',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
  });

  it('files Events about a cluster-scoped DeployRegion in the default namespace, with no namespace on the object', () => {
    const region = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'arm', uid: 'u2' } };
    const event = eventFor(region, { type: 'Warning', reason: 'RegionFailed', message: 'down' }, 'a', now, 's');
    expect(event.metadata).toEqual({ name: 'arm.s', namespace: 'default' });
    expect(event.involvedObject).toEqual({ apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', name: 'arm', uid: 'u2' });
  });

  it('shortens long messages below the API limit', () => {
    const event = eventFor(ed, { type: 'Warning', reason: 'InvalidSpec', message: 'x'.repeat(5000) }, 'a', now, 's');
    expect(event.message).toHaveLength(1000);
    expect(event.message?.endsWith('...')).toBe(true);
  });
});
