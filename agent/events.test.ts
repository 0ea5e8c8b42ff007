import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './runtime/clock.js';
import { apiEventRecorder, eventFor, REPORTING_COMPONENT } from './events.js';
import type { Logger } from './runtime/log.js';

describe('eventFor', () => {
  const ed = {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', resourceVersion: '7' },
  };
  const now = new Date(Date.UTC(2026, 0, 1));

  it('builds a core/v1 Event about the ExtendedDeployment', () => {
    expect(eventFor(ed, { type: 'Normal', reason: 'GroupStarted', message: 'group 2 of 3 started' }, 'agent-1', now, 'abc')).toEqual({
      metadata: { name: 'web.abc', namespace: 'shop' },
      involvedObject: {
        apiVersion: 'extendeddeployment.io/v1beta1',
        kind: 'ExtendedDeployment',
        name: 'web',
        namespace: 'shop',
        uid: 'u1',
        resourceVersion: '7',
      },
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

/** A CoreV1Api whose Event creations wait until released; `fail` makes the next ones reject. */
function slowApi() {
  const pending: { body: CoreV1Event; settle: (ok: boolean) => void }[] = [];
  const sent: string[] = [];
  const api = {
    createNamespacedEvent: ({ body }: { body: CoreV1Event }) =>
      new Promise((resolve, reject) =>
        pending.push({
          body,
          settle: (ok) => {
            sent.push(body.reason ?? '');
            if (ok) resolve(body);
            else reject(Object.assign(new Error('etcd timeout'), { code: 500 }));
          },
        }),
      ),
  } as unknown as CoreV1Api;
  return { api, pending, sent };
}

function recordingLog() {
  const warnings: string[] = [];
  const log = { warn: (msg: string) => warnings.push(msg), info: () => undefined, debug: () => undefined, error: () => undefined } as unknown as Logger;
  return { log, warnings };
}

const flushMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('apiEventRecorder', () => {
  const ed = { metadata: { name: 'web', namespace: 'shop' } };
  const event = (reason: string) => ({ type: 'Normal' as const, reason, message: reason });

  it('returns at once, sends at most `senders` Events at a time, in the order recorded, stamped when recorded', async () => {
    const { api, pending, sent } = slowApi();
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const recorder = apiEventRecorder(api, 'agent-1', recordingLog().log, { senders: 2, clock });
    for (const reason of ['A', 'B', 'C']) {
      recorder.record(ed, event(reason));
      clock.advance(1000);
    }
    expect(pending.map((p) => p.body.reason)).toEqual(['A', 'B']);
    expect(pending.map((p) => p.body.firstTimestamp)).toEqual([new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(2026, 0, 1, 0, 0, 1))]);
    pending.shift()!.settle(true);
    await flushMicrotasks();
    expect(pending.map((p) => p.body.reason)).toEqual(['B', 'C']);
    expect(pending[1]!.body.firstTimestamp).toEqual(new Date(Date.UTC(2026, 0, 1, 0, 0, 2)));
    for (const p of pending.splice(0)) p.settle(true);
    await flushMicrotasks();
    expect(sent).toEqual(['A', 'B', 'C']);
  });

  it('logs a failed Event and goes on with the next', async () => {
    const { api, pending, sent } = slowApi();
    const { log, warnings } = recordingLog();
    const recorder = apiEventRecorder(api, 'agent-1', log, { senders: 1 });
    recorder.record(ed, event('A'));
    recorder.record(ed, event('B'));
    pending.shift()!.settle(false);
    await flushMicrotasks();
    pending.shift()!.settle(true);
    await flushMicrotasks();
    expect(sent).toEqual(['A', 'B']);
    expect(warnings).toEqual(['could not record event']);
  });

  it('drops and logs an Event when `capacity` are waiting already', () => {
    const { api, pending } = slowApi();
    const { log, warnings } = recordingLog();
    const recorder = apiEventRecorder(api, 'agent-1', log, { senders: 1, capacity: 2 });
    for (const reason of ['A', 'B', 'C', 'D']) recorder.record(ed, event(reason));
    expect(pending.map((p) => p.body.reason)).toEqual(['A']); // B and C wait; D found the queue full
    expect(warnings).toEqual(['dropped event: too many waiting to be sent']);
  });

  it('flush resolves once everything queued is sent, or at its timeout', async () => {
    const { api, pending } = slowApi();
    const clock = new FakeClock();
    const recorder = apiEventRecorder(api, 'agent-1', recordingLog().log, { senders: 1, clock });
    await recorder.flush(1000); // nothing queued
    recorder.record(ed, event('A'));
    recorder.record(ed, event('B'));
    let flushed = false;
    void recorder.flush(60_000).then(() => (flushed = true));
    pending.shift()!.settle(true);
    await flushMicrotasks();
    expect(flushed).toBe(false);
    pending.shift()!.settle(true);
    await flushMicrotasks();
    expect(flushed).toBe(true);
    recorder.record(ed, event('C'));
    let timedOut = false;
    void recorder.flush(1000).then(() => (timedOut = true));
    clock.advance(1000);
    await flushMicrotasks();
    expect(timedOut).toBe(true);
    expect(clock.pending()).toBe(0);
  });
});
