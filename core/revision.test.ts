import { describe, expect, it } from 'vitest';
import { REVISION_LABEL } from './labels.js';
import { canonicalJson, rolloutRevision, templateRevision } from './revision.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };

describe('revision hash', () => {
  it('canonical JSON sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('matches the golden value (first 10 hex of SHA-256 of the canonical JSON)', () => {
    // printf %s '{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"app"}]}}' | sha256sum | cut -c1-10
    expect(templateRevision(template)).toBe('a07165cccd');
  });

  it('ignores key order and the revision label itself', () => {
    const reordered = { spec: { containers: [{ image: 'nginx:1.27', name: 'app' }] }, metadata: { labels: { [REVISION_LABEL]: 'old', app: 'web' } } };
    expect(templateRevision(reordered)).toBe(templateRevision(template));
  });

  it('changes with any field of the template', () => {
    const changed = { ...template, spec: { containers: [{ name: 'app', image: 'nginx:1.28' }] } };
    expect(templateRevision(changed)).not.toBe(templateRevision(template));
  });

  it('rollout revision does not depend on region order', () => {
    expect(
      rolloutRevision(
        new Map([
          ['a', '1'],
          ['b', '2'],
        ]),
      ),
    ).toBe(
      rolloutRevision(
        new Map([
          ['b', '2'],
          ['a', '1'],
        ]),
      ),
    );
    expect(
      rolloutRevision(
        new Map([
          ['a', '1'],
          ['b', '2'],
        ]),
      ),
    ).not.toBe(
      rolloutRevision(
        new Map([
          ['a', '1'],
          ['b', '3'],
        ]),
      ),
    );
  });
});

describe('canonicalJson', () => {
  const reversed = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reversed)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .reverse()
              .map((k) => [k, reversed((v as Record<string, unknown>)[k])]),
          )
        : v;

  it('is lossless and does not depend on the order keys were inserted in, for any JSON value', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
        expect(canonicalJson(reversed(v))).toBe(canonicalJson(v));
      }),
      { seed: 7, numRuns: 1000 },
    );
  });

  it('sorts keys by code unit, integer-like keys included (plain JSON.stringify puts those first)', () => {
    expect(canonicalJson({ b: 1, '10': 2, '': 3, '9': 4, a: 5 })).toBe('{"":3,"10":2,"9":4,"a":5,"b":1}');
  });
});
