import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { PodTemplate } from './kube/objects.js';
import { REVISION_LABEL, REVISIONS_ANNOTATION } from './labels.js';
import { canonicalJson, RevisionCache, rolloutRevision, templateRevision } from './revision.js';
import { defaultPullPolicy } from './template-defaults.js';

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

type Committed = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec: { template: PodTemplate } };

/** Every object of the committed dist/, which `npm run synth` rendered from examples/. */
const committed = (): [string, Committed][] =>
  readdirSync('dist')
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(`dist/${file}`, 'utf8')).map((d): [string, Committed] => [file, d.toJS() as Committed]));

/** `template` with every pod and container default the API server would add spelled out. */
function spelledOut(template: PodTemplate): PodTemplate {
  const copy = structuredClone(template);
  Object.assign((copy.metadata ??= {}), { creationTimestamp: null, annotations: {} });
  const spec: Record<string, unknown> = (copy.spec ??= {});
  Object.assign(spec, { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30 });
  spec['securityContext'] ??= {};
  for (const c of copy.spec.containers ?? []) {
    Object.assign(c, { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
    c.resources ??= {};
    if (!('imagePullPolicy' in c)) Object.assign(c, { imagePullPolicy: defaultPullPolicy(c.image) });
  }
  return copy;
}

describe('templateRevision with a RevisionCache', () => {
  const app = { name: 'app', image: 'web:1', imagePullPolicy: 'IfNotPresent', resources: {}, ports: [{ containerPort: 80, protocol: 'TCP' }], env: null };
  // Written as JSON comes, defaults, nulls and odd shapes included: the revision takes any template.
  const templates = [
    template,
    { spec: { containers: [app, { name: 'side', image: 'side', terminationMessagePath: '/dev/termination-log' }], initContainers: [app] } },
    {
      metadata: { labels: { [REVISION_LABEL]: 'x' } },
      spec: { restartPolicy: 'Always', containers: [], initContainers: [], volumes: [{ name: 'v', secret: { defaultMode: 420 } }] },
    },
    { spec: { containers: [null, app] } },
    { spec: { containers: { not: 'a list' } } },
    { metadata: { labels: { app: 'web' } } },
  ] as unknown as PodTemplate[];

  it('gives every template the revision it gets without one, the containers it has seen included', () => {
    const cache = new RevisionCache();
    for (const t of [...templates, ...templates]) expect(templateRevision(t, cache)).toBe(templateRevision(t));
  });
});

describe('revisions of the committed examples (an upgrade of edctl must not roll out every workload)', () => {
  const objects = committed();
  const templates = objects
    .filter(([, o]) => o.spec?.template?.metadata?.labels?.[REVISION_LABEL] !== undefined)
    .map(([file, o]): [string, PodTemplate] => [`${file} ${o.kind} ${o.metadata.name}`, o.spec.template]);

  it('cover the workload of every region of every ExtendedDeployment', () => {
    const regions = objects.flatMap(([, o]) => Object.values(JSON.parse(o.metadata?.annotations?.[REVISIONS_ANNOTATION] ?? '{}') as object));
    expect(regions.length).toBeGreaterThan(0);
    expect(templates.map(([, t]) => t.metadata?.labels?.[REVISION_LABEL]).sort()).toEqual(regions.sort());
  });

  it.each(templates)('%s keeps the revision it was committed with', (_name, template) => {
    expect(templateRevision(template)).toBe(template.metadata?.labels?.[REVISION_LABEL]);
  });

  it.each(templates)('%s keeps it with every default spelled out', (_name, template) => {
    expect(canonicalJson(spelledOut(template))).not.toBe(canonicalJson(template));
    expect(templateRevision(spelledOut(template))).toBe(template.metadata?.labels?.[REVISION_LABEL]);
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
