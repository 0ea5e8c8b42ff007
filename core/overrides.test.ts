import { describe, expect, it } from 'vitest';
import { applyPatches, applyTypedOverrides, type JsonObject, type PatchOperation } from './overrides.js';

const upstreamBase = (): JsonObject => ({
  spec: { containers: [{ name: 'hello-override', image: 'nginx', command: ['./start.sh'], args: ['--kubectl=.config.yml.yaml', '--tt=test'] }] },
});
const container = (t: JsonObject) => (t['spec'] as { containers: JsonObject[] }).containers[0];

describe('applyPatches: upstream override vectors', () => {
  it.each<[string, PatchOperation[], JsonObject]>([
    [
      'replace image, command and args',
      [
        { op: 'replace', path: '/spec/containers/0/image', value: 'nginx-override' },
        { op: 'replace', path: '/spec/containers/0/command', value: ['./startcommand-override.sh', '12'] },
        { op: 'replace', path: '/spec/containers/0/args', value: ['--tt=test'] },
      ],
      { name: 'hello-override', image: 'nginx-override', command: ['./startcommand-override.sh', '12'], args: ['--tt=test'] },
    ],
    [
      'remove image, command and args',
      [
        { op: 'remove', path: '/spec/containers/0/image' },
        { op: 'remove', path: '/spec/containers/0/command' },
        { op: 'remove', path: '/spec/containers/0/args' },
      ],
      { name: 'hello-override' },
    ],
    [
      'add on existing members replaces them',
      [
        { op: 'add', path: '/spec/containers/0/image', value: '000' },
        { op: 'add', path: '/spec/containers/0/command', value: ['111', '222'] },
        { op: 'add', path: '/spec/containers/0/args', value: ['333', '444'] },
      ],
      { name: 'hello-override', image: '000', command: ['111', '222'], args: ['333', '444'] },
    ],
    [
      'replace, add and remove together',
      [
        { op: 'replace', path: '/spec/containers/0/image', value: 'nginx-override' },
        { op: 'add', path: '/spec/containers/0/command', value: ['111', '222'] },
        { op: 'remove', path: '/spec/containers/0/args' },
      ],
      { name: 'hello-override', image: 'nginx-override', command: ['111', '222'] },
    ],
    ['no operations leave the template unchanged', [], container(upstreamBase()) as JsonObject],
  ])('%s', (_name, ops, expected) => {
    const result = applyPatches(upstreamBase(), ops, ['spec', 'overriders', 0, 'overriders']);
    expect(result.problems).toEqual([]);
    expect(container(result.template)).toEqual(expected);
  });

  it('fails loudly, naming the operation, where upstream silently kept the base template', () => {
    const base = { spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const result = applyPatches(
      base,
      [
        { op: 'replace', path: '/spec/containers/0/image', value: 'x' },
        { op: 'remove', path: '/spec/containers/0/args' },
      ],
      ['spec', 'overriders', 1, 'overriders'],
    );
    expect(result.problems).toEqual([
      { path: ['spec', 'overriders', 1, 'overriders', 1], message: 'remove /spec/containers/0/args does not apply: the path does not exist in the template' },
    ]);
  });

  it('reports a path that is not a JSON pointer and a missing value', () => {
    const base = { spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const result = applyPatches(
      base,
      [
        { op: 'replace', path: 'spec/containers', value: 1 },
        { op: 'add', path: '/spec/x' },
      ],
      ['p'],
    );
    expect(result.problems.map((p) => p.message)).toEqual([
      'replace spec/containers does not apply: the path is not a JSON pointer (it must start with "/")',
      'add /spec/x needs a value',
    ]);
  });

  it('never mutates its input', () => {
    const base = upstreamBase();
    applyPatches(base, [{ op: 'remove', path: '/spec/containers/0/image' }], []);
    expect(base).toEqual(upstreamBase());
  });
});

describe('applyTypedOverrides', () => {
  const base = (): JsonObject => ({
    metadata: { labels: { app: 'web' } },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [
        {
          name: 'app',
          image: 'web:1',
          env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'x', key: 'y' } } }],
          resources: { requests: { cpu: '1' } },
        },
        { name: 'sidecar', image: 'proxy:1' },
      ],
      tolerations: [{ key: 'a', operator: 'Exists' }],
    },
  });

  it('sets images by container name, regular and init', () => {
    const { template, problems } = applyTypedOverrides(base(), { images: { app: 'web:1-arm64', init: 'busybox:arm' } }, []);
    expect(problems).toEqual([]);
    const spec = template['spec'] as { containers: { image: string }[]; initContainers: { image: string }[] };
    expect(spec.containers.map((c) => c.image)).toEqual(['web:1-arm64', 'proxy:1']);
    expect(spec.initContainers[0]?.image).toBe('busybox:arm');
  });

  it('replaces env vars of the same name (dropping valueFrom) and appends the rest in key order', () => {
    const { template } = applyTypedOverrides(base(), { env: { app: { ZONE: 'a', MODE: 'fast', ARCH: 'arm' } } }, []);
    expect(container(template)?.['env']).toEqual([
      { name: 'MODE', value: 'fast' },
      { name: 'ARCH', value: 'arm' },
      { name: 'ZONE', value: 'a' },
    ]);
  });

  it('merges resources key by key', () => {
    const { template } = applyTypedOverrides(base(), { resources: { app: { requests: { memory: '1Gi' }, limits: { 'nvidia.com/gpu': 1 } } } }, []);
    expect(container(template)?.['resources']).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { 'nvidia.com/gpu': 1 } });
  });

  it('merges labels, annotations, node selector and tolerations without duplicates', () => {
    const { template } = applyTypedOverrides(
      base(),
      {
        labels: { tier: 'gpu' },
        annotations: { note: 'x' },
        nodeSelector: { disk: 'ssd' },
        tolerations: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'Exists' },
        ],
      },
      [],
    );
    expect(template['metadata']).toEqual({ labels: { app: 'web', tier: 'gpu' }, annotations: { note: 'x' } });
    const spec = template['spec'] as JsonObject;
    expect(spec['nodeSelector']).toEqual({ disk: 'ssd' });
    expect(spec['tolerations']).toEqual([
      { key: 'a', operator: 'Exists' },
      { key: 'b', operator: 'Exists' },
    ]);
  });

  it('reports unknown containers and reserved labels at their paths', () => {
    const { problems } = applyTypedOverrides(base(), { images: { nope: 'x' }, env: { ghost: { A: '1' } }, labels: { 'extendeddeployment.io/region': 'x' } }, [
      'spec',
      'regions',
      1,
      'overrides',
    ]);
    expect(problems).toEqual([
      { path: ['spec', 'regions', 1, 'overrides', 'images', 'nope'], message: 'no container named "nope" in the template (containers: app, sidecar, init)' },
      { path: ['spec', 'regions', 1, 'overrides', 'env', 'ghost'], message: 'no container named "ghost" in the template (containers: app, sidecar, init)' },
      { path: ['spec', 'regions', 1, 'overrides', 'labels', 'extendeddeployment.io/region'], message: 'is set by the renderer and cannot be overridden' },
    ]);
  });
});
