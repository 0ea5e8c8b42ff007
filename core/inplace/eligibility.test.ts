import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { podUpdateMethod, quantityValue, templateUpdateMethod } from './eligibility.js';

type Json = { [key: string]: unknown };
type Template = { metadata?: { labels?: Record<string, string> }; spec?: Json & { containers?: (Json & { name: string; image?: string })[] } };

/** Pods created by a real API server (the lab) from the rendered ReplicaSets in dist/, with every default it added. */
const pod = (name: string) =>
  JSON.parse(readFileSync(`core/inplace/fixtures/pod-${name}.json`, 'utf8')) as { metadata: { labels: Record<string, string> }; spec: Json };
/** The rendered template of a ReplicaSet in dist/. */
function template(file: string, replicaSet: string): Template {
  const rs = parseAllDocuments(readFileSync(`dist/${file}.k8s.yaml`, 'utf8'))
    .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { template: Template } })
    .find((o) => o.kind === 'ReplicaSet' && o.metadata.name === replicaSet);
  if (!rs) throw new Error(`${replicaSet} not in dist/${file}.k8s.yaml`);
  return rs.spec.template;
}
const edit = (t: Template, change: (c: Json & { name: string; image?: string }, t: Template) => void): Template => {
  const copy = structuredClone(t);
  change(copy.spec?.containers?.[0] ?? { name: '' }, copy);
  return copy;
};

const cases: [string, string, string][] = [
  ['web-amd64', 'multi-arch-web', 'web-amd64'],
  ['api-zone-a', 'zonal-api', 'api-zone-a'],
  ['llm-server-gpu-a', 'gpu-inference', 'llm-server-gpu-a'],
];

describe('podUpdateMethod on pods a real API server created (defaults and admission included)', () => {
  it.each(cases)('%s: an image-only change is swapped in place', (name, file, rs) => {
    const next = edit(template(file, rs), (c) => (c['image'] = 'registry.example.com/next:2'));
    const container = String(template(file, rs).spec?.containers?.[0]?.name);
    expect(podUpdateMethod(pod(name), next)).toEqual({ method: 'in-place', images: { [container]: 'registry.example.com/next:2' } });
  });

  it.each(cases)('%s: the same template is recognised as unchanged despite the defaults', (name, file, rs) => {
    expect(podUpdateMethod(pod(name), template(file, rs))).toEqual({ method: 'replace', reason: 'no image changed' });
  });

  it.each<[string, (c: Json, t: Template) => void, string]>([
    ['env', (c) => (c['env'] = [{ name: 'LOG_LEVEL', value: 'debug' }]), 'containers[0].env changed'],
    ['command', (c) => (c['command'] = ['/bin/api', '--fast']), 'containers[0].command changed'],
    ['resources', (c) => (c['resources'] = { requests: { cpu: '2' } }), 'containers[0].resources changed'],
    ['a probe', (c) => ((c['readinessProbe'] as Json)['periodSeconds'] = 5), 'containers[0].readinessProbe changed'],
    ['a label that matters', (_c, t) => ((t.metadata ??= {}).labels = { ...t.metadata.labels, tier: 'gold' }), 'label tier changed'],
    ['node selector', (_c, t) => ((t.spec ??= {})['nodeSelector'] = { disk: 'ssd' }), 'nodeSelector changed'],
    ['init containers', (_c, t) => ((t.spec ??= {})['initContainers'] = [{ name: 'init', image: 'busybox' }]), 'initContainers changed'],
  ])('an image change together with %s means replacement', (_what, change, reason) => {
    const next = edit(template('zonal-api', 'api-zone-a'), (c, t) => {
      c['image'] = 'registry.example.com/next:2';
      change(c, t);
    });
    expect(podUpdateMethod(pod('api-zone-a'), next)).toEqual({ method: 'replace', reason });
  });

  it("tolerates the path the API server gives an HTTP probe that names none ('/')", () => {
    const root = pod('api-zone-a');
    (root.spec['containers'] as { readinessProbe: { httpGet: Json } }[])[0]!.readinessProbe.httpGet['path'] = '/';
    const next = edit(template('zonal-api', 'api-zone-a'), (c) => {
      c['image'] = 'registry.example.com/next:2';
      delete ((c['readinessProbe'] as Json)['httpGet'] as Json)['path'];
    });
    expect(podUpdateMethod(root, next).method).toBe('in-place');
  });

  it('reads quantities the way the API server writes them', () => {
    const p = pod('llm-server-gpu-a');
    const next = edit(template('gpu-inference', 'llm-server-gpu-a'), (c) => {
      c['image'] = 'x:2';
      c['resources'] = { requests: { 'nvidia.com/gpu': 1, cpu: '2000m' }, limits: { 'nvidia.com/gpu': '1' } };
    });
    expect(podUpdateMethod(p, next).method).toBe('in-place');
    expect([quantityValue('500m'), quantityValue('1Gi'), quantityValue('1e3'), quantityValue(2), quantityValue('lots')]).toEqual([
      0.5,
      2 ** 30,
      1000,
      2,
      undefined,
    ]);
  });
});

describe('templateUpdateMethod (what edctl plan compares)', () => {
  const base = template('gpu-inference', 'llm-server-gpu-a');
  it("in place when only regular containers' images differ, the revision label aside", () => {
    const next = edit(base, (c, t) => {
      c['image'] = 'x:2';
      (t.metadata ??= {}).labels = { ...t.metadata.labels, 'extendeddeployment.io/revision': 'other' };
    });
    expect(templateUpdateMethod(base, next)).toEqual({ method: 'in-place', images: { server: 'x:2' } });
  });
  it('replacement when anything else differs too', () => {
    expect(
      templateUpdateMethod(
        base,
        edit(base, (c) => ((c['image'] = 'x:2'), (c['args'] = ['--model=other']))),
      ),
    ).toEqual({ method: 'replace', reason: 'fields other than images changed' });
  });
});
