// The pod runner's pure parts (test/cluster/pod-behaviour.ts) and the bridge's port pairs (test/cluster/netns-bridge.ts).
import { describe, expect, it } from 'vitest';
import { REVISION_LABEL } from '../../core/labels.js';
import { formatPortPairs, parsePortPairs } from '../cluster/netns-bridge.js';
import { DEFAULT_PORT, answerBody, behaviourOf, endpointsOf, failsRequest, imageTag, type PodLike } from '../cluster/pod-behaviour.js';

describe('imageTag', () => {
  it.each([
    ['registry.example/web:err-10', 'err-10'],
    ['registry.example:5000/web:v2', 'v2'],
    ['registry.example:5000/web', ''],
    ['web', ''],
    ['web:slow-200@sha256:abc', 'slow-200'],
  ])('%s → %j', (image, tag) => expect(imageTag(image)).toBe(tag));
});

describe('behaviourOf', () => {
  it('reads err-N and slow-N, alone or combined', () => {
    expect(behaviourOf('registry.example/web:err-10')).toEqual({ errorPercent: 10, delayMs: 0 });
    expect(behaviourOf('registry.example/web:slow-250')).toEqual({ errorPercent: 0, delayMs: 250 });
    expect(behaviourOf('registry.example/web:v3-err-50-slow-20')).toEqual({ errorPercent: 50, delayMs: 20 });
  });
  it('treats any other tag, and a registry port, as a healthy fast version', () => {
    expect(behaviourOf('registry.example:5000/web:v2')).toEqual({ errorPercent: 0, delayMs: 0 });
    expect(behaviourOf('registry.example/web:terr-10')).toEqual({ errorPercent: 0, delayMs: 0 });
  });
  it('caps the error rate at 100 %', () => expect(behaviourOf('web:err-250').errorPercent).toBe(100));
});

describe('failsRequest', () => {
  const failures = (n: number, p: number) => Array.from({ length: n }, (_, i) => failsRequest(i + 1, p)).filter(Boolean).length;
  it('fails exactly p of every 100 consecutive requests', () => {
    for (const p of [0, 1, 10, 25, 33, 50, 99, 100]) {
      for (const start of [1, 7, 101]) {
        const window = Array.from({ length: 100 }, (_, i) => failsRequest(start + i, p)).filter(Boolean).length;
        expect(window, `p=${p} from ${start}`).toBe(p);
      }
    }
  });
  it('spreads failures evenly: every k-th request for p = 100/k', () => {
    expect(Array.from({ length: 10 }, (_, i) => failsRequest(i + 1, 50))).toEqual([false, true, false, true, false, true, false, true, false, true]);
    expect(Array.from({ length: 10 }, (_, i) => (failsRequest(i + 1, 10) ? i + 1 : 0)).filter(Boolean)).toEqual([10]);
    expect(failures(1000, 10)).toBe(100);
  });
});

function pod(overrides: Partial<PodLike['status']> = {}, ports?: { containerPort: number; protocol?: string }[]): PodLike {
  return {
    metadata: { name: 'web-1', namespace: 'shop', uid: 'u1', labels: { [REVISION_LABEL]: 'abc123' } },
    spec: { containers: [{ name: 'app', image: 'registry.example/web:v2', ...(ports ? { ports } : {}) }] },
    status: {
      phase: 'Running',
      podIP: '10.244.3.7',
      containerStatuses: [{ name: 'app', image: 'registry.example/web:v2', containerID: 'kwok://1', state: { running: {} } }],
      ...overrides,
    },
  };
}

describe('endpointsOf', () => {
  it('serves the default port when the container declares none', () => {
    const [ep, ...rest] = endpointsOf(pod());
    expect(rest).toEqual([]);
    expect(ep).toMatchObject({ key: `10.244.3.7:${DEFAULT_PORT}`, namespace: 'shop', pod: 'web-1', revision: 'abc123', image: 'registry.example/web:v2' });
  });
  it('serves every TCP container port, and no UDP one', () => {
    const eps = endpointsOf(pod({}, [{ containerPort: 80 }, { containerPort: 9090, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }]));
    expect(eps.map((e) => e.port)).toEqual([80, 9090]);
  });
  it('serves nothing unless the pod is Running with an IP and the container runs', () => {
    expect(endpointsOf(pod({ phase: 'Pending' }))).toEqual([]);
    expect(endpointsOf(pod({ podIP: '' }))).toEqual([]);
    expect(endpointsOf(pod({ containerStatuses: [{ name: 'app', state: {} }] }))).toEqual([]);
    expect(endpointsOf(pod({ containerStatuses: [] }))).toEqual([]);
  });
  it('reports what runs: the status image during an image change, and a new instance after a restart', () => {
    const changing = pod();
    changing.spec!.containers[0]!.image = 'registry.example/web:v3';
    const [before] = endpointsOf(changing);
    expect(before?.image).toBe('registry.example/web:v2');
    const restarted = pod({ containerStatuses: [{ name: 'app', image: 'registry.example/web:v3', containerID: 'kwok://2', state: { running: {} } }] });
    expect(endpointsOf(restarted)[0]?.instance).not.toBe(before?.instance);
  });
  it('answers with pod, namespace, revision and image; a failure says why', () => {
    const [ep] = endpointsOf(pod());
    expect(JSON.parse(answerBody(ep!, false))).toEqual({ pod: 'web-1', namespace: 'shop', revision: 'abc123', image: 'registry.example/web:v2' });
    expect(JSON.parse(answerBody({ ...ep!, image: 'web:err-10' }, true)).error).toMatch(/10%/);
  });
});

describe('netns-bridge port pairs', () => {
  it('parses host:ns and same-number ports, and formats them back', () => {
    const pairs = parsePortPairs('41234:8000,6443');
    expect(pairs).toEqual([
      { host: 41234, ns: 8000 },
      { host: 6443, ns: 6443 },
    ]);
    expect(formatPortPairs(pairs)).toBe('41234:8000,6443');
  });
  it('rejects what is not a port', () => expect(() => parsePortPairs('80:x')).toThrow(/not a port pair/));
});
