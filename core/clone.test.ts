import { describe, expect, it } from 'vitest';
import { cloneJson } from './overrides.js';

describe('cloneJson', () => {
  const template = {
    metadata: { labels: { app: 'web' }, annotations: {} },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'nginx:1',
          ports: [{ containerPort: 8080 }],
          env: [{ name: 'A', value: '1' }],
          resources: { requests: { cpu: '250m', memory: 1 } },
        },
      ],
      nodeSelector: null,
      enableServiceLinks: false,
      tolerations: [],
    },
  };

  it('gives what structuredClone gives for plain JSON', () => {
    expect(cloneJson(template)).toStrictEqual(structuredClone(template));
  });

  it('shares nothing with its input', () => {
    const copy = cloneJson(template);
    copy.metadata.labels.app = 'other';
    copy.spec.containers[0]?.env.push({ name: 'B', value: '2' });
    expect(template.metadata.labels.app).toBe('web');
    expect(template.spec.containers[0]?.env).toHaveLength(1);
  });

  it('keeps own properties that hold undefined, and array holes', () => {
    // The hole is the point: cloneJson must keep it a hole, as structuredClone does, not fill it with undefined.
    // eslint-disable-next-line no-sparse-arrays
    const value = { a: undefined, list: [1, , 3] };
    const copy = cloneJson(value);
    expect(Object.keys(copy)).toEqual(['a', 'list']);
    expect(1 in copy.list).toBe(false);
    expect(copy).toStrictEqual(structuredClone(value));
  });

  it('keeps a __proto__ key as an own property, as JSON.parse leaves it', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'x']);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
  });

  it('copies values that are not plain JSON the way structuredClone does', () => {
    const when = new Date(0);
    const copy = cloneJson({ when, bare: Object.assign(Object.create(null) as object, { k: 'v' }) });
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(0);
    expect(copy.bare).toEqual({ k: 'v' });
  });

  it('refuses functions and symbols, as structuredClone does', () => {
    expect(() => cloneJson({ spec: { grace: () => 30 } })).toThrow(/could not be cloned/);
    expect(() => cloneJson({ spec: { tag: Symbol('x') } })).toThrow(/could not be cloned/);
  });

  it('copies a cycle as structuredClone does', () => {
    const value: { spec: { self?: unknown } } = { spec: {} };
    value.spec.self = value;
    const copy = cloneJson(value);
    expect(copy).not.toBe(value);
    expect(copy.spec.self).toBe(copy);
  });

  it('copies a deeply nested value', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 500; i++) deep = { child: deep };
    expect(cloneJson(deep)).toStrictEqual(deep);
  });
});
