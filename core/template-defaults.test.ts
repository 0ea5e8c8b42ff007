import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { API_VERSION } from './api/identity.js';
import { ADMISSION_TOLERATION_KEYS, TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX } from './inplace/defaults.js';
import type { PodTemplate } from './kube/objects.js';
import { REVISION_LABEL } from './labels.js';
import { formatProblem } from './problems.js';
import { renderSet } from './render.js';
import { templateRevision } from './revision.js';
import { defaultPullPolicy, withoutDefaults } from './template-defaults.js';

type Json = { [key: string]: unknown };
type Template = { metadata: Json & { labels: Record<string, string> }; spec: Json & { containers: (Json & { name: string })[] } };

const plain = (): Template => ({
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'shop/web:1.0',
        ports: [{ containerPort: 8080, name: 'http' }],
        readinessProbe: { httpGet: { port: 8080, path: '/healthz' } },
      },
    ],
  },
});

type Edit = (t: Template, c: Json) => void;
const probe = (c: Json) => c['readinessProbe'] as Json;
const volume = (t: Template, v: Json) => (t.spec['volumes'] = [{ name: 'v', ...v }]);

/** `edits` applied, in order, to a fresh plain template. */
function edited(...edits: Edit[]): Template {
  const t = plain();
  for (const edit of edits) edit(t, t.spec.containers[0] ?? {});
  return t;
}

describe('fields equal to the API server defaults do not change the revision', () => {
  // [what, setup applied to both templates, the default spelled out on one of them]
  it.each<[string, Edit, Edit]>([
    ['metadata.creationTimestamp: null', () => {}, (t) => (t.metadata['creationTimestamp'] = null)],
    ['metadata.annotations: {}', () => {}, (t) => (t.metadata['annotations'] = {})],
    ['restartPolicy: Always', () => {}, (t) => (t.spec['restartPolicy'] = 'Always')],
    ['dnsPolicy: ClusterFirst', () => {}, (t) => (t.spec['dnsPolicy'] = 'ClusterFirst')],
    ['schedulerName: default-scheduler', () => {}, (t) => (t.spec['schedulerName'] = 'default-scheduler')],
    ['terminationGracePeriodSeconds: 30', () => {}, (t) => (t.spec['terminationGracePeriodSeconds'] = 30)],
    ['securityContext: {}', () => {}, (t) => (t.spec['securityContext'] = {})],
    ['securityContext with only nulls', () => {}, (t) => (t.spec['securityContext'] = { runAsUser: null })],
    ['hostNetwork, hostPID, hostIPC: false', () => {}, (t) => Object.assign(t.spec, { hostNetwork: false, hostPID: false, hostIPC: false })],
    ['nodeSelector: {}', () => {}, (t) => (t.spec['nodeSelector'] = {})],
    ['tolerations: [], volumes: []', () => {}, (t) => Object.assign(t.spec, { tolerations: [], volumes: [] })],
    ['affinity: null', () => {}, (t) => (t.spec['affinity'] = null)],
    ['resources: {}', () => {}, (_t, c) => (c['resources'] = {})],
    ['resources: {limits: {}, requests: {}}', () => {}, (_t, c) => (c['resources'] = { limits: {}, requests: {} })],
    ['terminationMessagePath: /dev/termination-log', () => {}, (_t, c) => (c['terminationMessagePath'] = '/dev/termination-log')],
    ['terminationMessagePolicy: File', () => {}, (_t, c) => (c['terminationMessagePolicy'] = 'File')],
    ['stdin, stdinOnce, tty: false', () => {}, (_t, c) => Object.assign(c, { stdin: false, stdinOnce: false, tty: false })],
    ['env: [], args: [], command: []', () => {}, (_t, c) => Object.assign(c, { env: [], args: [], command: [] })],
    ['imagePullPolicy: IfNotPresent on a tagged image', () => {}, (_t, c) => (c['imagePullPolicy'] = 'IfNotPresent')],
    ['imagePullPolicy: Always on :latest', (_t, c) => (c['image'] = 'shop/web:latest'), (_t, c) => (c['imagePullPolicy'] = 'Always')],
    ['imagePullPolicy: Always on an untagged image', (_t, c) => (c['image'] = 'nginx'), (_t, c) => (c['imagePullPolicy'] = 'Always')],
    ['imagePullPolicy: Always when the only colon is a port', (_t, c) => (c['image'] = 'localhost:5000/web'), (_t, c) => (c['imagePullPolicy'] = 'Always')],
    [
      'imagePullPolicy: IfNotPresent on a digest',
      (_t, c) => (c['image'] = `shop/web@sha256:${'a'.repeat(64)}`),
      (_t, c) => (c['imagePullPolicy'] = 'IfNotPresent'),
    ],
    ['ports: protocol TCP', () => {}, (_t, c) => ((c['ports'] as Json[])[0]!['protocol'] = 'TCP')],
    [
      'probe: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3',
      () => {},
      (_t, c) => Object.assign(probe(c), { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 }),
    ],
    ['probe httpGet: scheme HTTP', () => {}, (_t, c) => ((probe(c)['httpGet'] as Json)['scheme'] = 'HTTP')],
    ['probe httpGet: path /', (_t, c) => delete (probe(c)['httpGet'] as Json)['path'], (_t, c) => ((probe(c)['httpGet'] as Json)['path'] = '/')],
    [
      'lifecycle preStop httpGet: scheme HTTP',
      (_t, c) => (c['lifecycle'] = { preStop: { httpGet: { port: 8080, path: '/drain' } } }),
      (_t, c) => ((c['lifecycle'] as { preStop: { httpGet: Json } }).preStop.httpGet['scheme'] = 'HTTP'),
    ],
    [
      'env fieldRef: apiVersion v1',
      (_t, c) => (c['env'] = [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }]),
      (_t, c) => ((c['env'] as { valueFrom: { fieldRef: Json } }[])[0]!.valueFrom.fieldRef['apiVersion'] = 'v1'),
    ],
    [
      'init container: the same container defaults',
      (t) => (t.spec['initContainers'] = [{ name: 'init', image: 'busybox:1.36' }]),
      (t) =>
        Object.assign((t.spec['initContainers'] as Json[])[0]!, {
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          resources: {},
        }),
    ],
    ['secret volume: defaultMode 0644', (t) => volume(t, { secret: { secretName: 's' } }), (t) => volume(t, { secret: { secretName: 's', defaultMode: 420 } })],
    ['configMap volume: defaultMode 0644', (t) => volume(t, { configMap: { name: 'c' } }), (t) => volume(t, { configMap: { name: 'c', defaultMode: 420 } })],
    [
      'downwardAPI volume: defaultMode 0644 and fieldRef apiVersion v1',
      (t) => volume(t, { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } }),
      (t) => volume(t, { downwardAPI: { defaultMode: 420, items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace', apiVersion: 'v1' } }] } }),
    ],
    [
      'projected volume: defaultMode 0644 and a token expiring after an hour',
      (t) => volume(t, { projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }),
      (t) => volume(t, { projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } }),
    ],
    ['hostPath volume: type ""', (t) => volume(t, { hostPath: { path: '/data' } }), (t) => volume(t, { hostPath: { path: '/data', type: '' } })],
    [
      'ephemeral volume: volumeMode Filesystem',
      (t) => volume(t, { ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } }),
      (t) => volume(t, { ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' } } } }),
    ],
  ])('%s', (_what, setup, spell) => {
    const spelled = edited(setup, spell);
    expect(spelled).not.toEqual(edited(setup));
    expect(templateRevision(spelled)).toBe(templateRevision(edited(setup)));
  });
});

describe('fields that differ from the API server defaults still change the revision', () => {
  // [what, setup applied to both templates, the change on one of them]
  it.each<[string, Edit, Edit]>([
    ['imagePullPolicy: Always on a tagged image', () => {}, (_t, c) => (c['imagePullPolicy'] = 'Always')],
    ['imagePullPolicy: Never', () => {}, (_t, c) => (c['imagePullPolicy'] = 'Never')],
    ['imagePullPolicy: IfNotPresent on :latest', (_t, c) => (c['image'] = 'shop/web:latest'), (_t, c) => (c['imagePullPolicy'] = 'IfNotPresent')],
    ['imagePullPolicy: IfNotPresent on an untagged image', (_t, c) => (c['image'] = 'nginx'), (_t, c) => (c['imagePullPolicy'] = 'IfNotPresent')],
    // Kubernetes would default this one to IfNotPresent; the renderer keeps what it cannot parse rather than guess.
    ['imagePullPolicy on an image reference that does not parse', (_t, c) => (c['image'] = 'Shop/Web:1.0'), (_t, c) => (c['imagePullPolicy'] = 'IfNotPresent')],
    ['restartPolicy: Never', () => {}, (t) => (t.spec['restartPolicy'] = 'Never')],
    ['dnsPolicy: Default', () => {}, (t) => (t.spec['dnsPolicy'] = 'Default')],
    ['terminationGracePeriodSeconds: 60', () => {}, (t) => (t.spec['terminationGracePeriodSeconds'] = 60)],
    ['hostNetwork: true', () => {}, (t) => (t.spec['hostNetwork'] = true)],
    ['automountServiceAccountToken: false', () => {}, (t) => (t.spec['automountServiceAccountToken'] = false)],
    [
      'restartPolicy: Always on an init container (a sidecar)',
      (t) => (t.spec['initContainers'] = [{ name: 'proxy', image: 'envoy:1.30' }]),
      (t) => ((t.spec['initContainers'] as Json[])[0]!['restartPolicy'] = 'Always'),
    ],
    // The API server keeps a container's empty securityContext as written (a pointer), unlike the pod's, which it defaults.
    ['a container securityContext: {}', () => {}, (_t, c) => (c['securityContext'] = {})],
    ['allowPrivilegeEscalation: false', () => {}, (_t, c) => (c['securityContext'] = { allowPrivilegeEscalation: false })],
    ['ports: protocol UDP', () => {}, (_t, c) => ((c['ports'] as Json[])[0]!['protocol'] = 'UDP')],
    ['probe periodSeconds 5', () => {}, (_t, c) => (probe(c)['periodSeconds'] = 5)],
    ['probe httpGet: scheme HTTPS', () => {}, (_t, c) => ((probe(c)['httpGet'] as Json)['scheme'] = 'HTTPS')],
    ['secret volume: defaultMode 0600', (t) => volume(t, { secret: { secretName: 's' } }), (t) => volume(t, { secret: { secretName: 's', defaultMode: 384 } })],
    // A volume without a source is defaulted to an emptyDir, but `emptyDir: {}` is how everyone writes one: it stays.
    ['emptyDir: {}', (t) => volume(t, {}), (t) => volume(t, { emptyDir: {} })],
    // An empty label selector selects every pod; an absent one selects none.
    [
      'an empty labelSelector in a pod anti-affinity term',
      (t) => (t.spec['affinity'] = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] } }),
      (t) => (t.spec['affinity'] = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: {} }] } }),
    ],
    // Pod defaults, not template ones: a Deployment's template hash changes with them too.
    ['enableServiceLinks: true', () => {}, (t) => (t.spec['enableServiceLinks'] = true)],
    [
      'requests equal to limits',
      (_t, c) => (c['resources'] = { limits: { cpu: '1' } }),
      (_t, c) => (c['resources'] = { limits: { cpu: '1' }, requests: { cpu: '1' } }),
    ],
    ['a label with a null value (the empty label value)', () => {}, (t) => (t.metadata.labels['tier'] = null as unknown as string)],
  ])('%s', (_what, setup, change) => {
    expect(templateRevision(edited(setup, change))).not.toBe(templateRevision(edited(setup)));
  });
});

describe('defaultPullPolicy', () => {
  it.each<[string, string | undefined]>([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['docker.io/library/nginx:latest', 'Always'],
    ['localhost:5000/web', 'Always'],
    ['registry.example.com:443/shop/web:1.4.2', 'IfNotPresent'],
    ['nginx:1.27', 'IfNotPresent'],
    [`nginx@sha256:${'0'.repeat(64)}`, 'IfNotPresent'],
    [`nginx:latest@sha256:${'0'.repeat(64)}`, 'Always'],
    ['Nginx:1.27', undefined],
    ['nginx:', undefined],
    ['', undefined],
  ])('%s: %s', (image, policy) => {
    expect(defaultPullPolicy(image)).toBe(policy);
  });
});

const distTemplates = (): [string, PodTemplate][] =>
  ['gpu-inference', 'multi-arch-web', 'upstream-sample', 'zonal-api'].flatMap((file) =>
    parseAllDocuments(readFileSync(`dist/${file}.k8s.yaml`, 'utf8'))
      .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { template: PodTemplate } })
      .filter((o) => o.kind === 'ReplicaSet' || o.kind === 'Deployment')
      .map((o): [string, PodTemplate] => [`${file}: ${o.metadata.name}`, o.spec.template]),
  );

describe('a template that spells no default', () => {
  it.each(distTemplates())('%s is left exactly as it is', (_name, template) => {
    expect(withoutDefaults(template)).toEqual(template);
  });

  it('is what dropping the defaults gives again (idempotent), for any JSON in the known places', async () => {
    const fc = (await import('fast-check')).default;
    const object = fc.dictionary(fc.constantFrom('name', 'image', 'resources', 'securityContext', 'ports', 'protocol', 'path', 'x'), fc.jsonValue(), {
      maxKeys: 5,
    });
    const template = fc.record({
      metadata: fc.option(object, { nil: undefined }),
      spec: fc.record({ containers: fc.array(object, { maxLength: 2 }), volumes: fc.array(object, { maxLength: 2 }), dnsPolicy: fc.jsonValue() }),
    });
    fc.assert(
      fc.property(template, (t) => {
        const once = withoutDefaults(t as unknown as PodTemplate);
        expect(withoutDefaults(once)).toEqual(once);
      }),
      { seed: 11, numRuns: 500 },
    );
  });

  it('is not changed in place', () => {
    const spelled = edited(
      (t) => (t.spec['restartPolicy'] = 'Always'),
      (_t, c) => (c['resources'] = {}),
    );
    const copy = structuredClone(spelled);
    withoutDefaults(spelled);
    expect(spelled).toEqual(copy);
  });
});

describe('pods a real API server created from dist/ (core/inplace/fixtures), admission and scheduling taken away', () => {
  // What the scheduler and admission plugins add to a pod (core/inplace/defaults.ts lists them), and the one Pod
  // default (SetDefaults_Pod) that is no template default.
  function asCreated(pod: { spec: Json & { containers: Json[] } }): Json {
    const { nodeName: _n, serviceAccount: _s, serviceAccountName: _sa, priority: _p, preemptionPolicy: _pp, enableServiceLinks: _e, ...spec } = pod.spec;
    const tolerations = (spec['tolerations'] as { key: string }[]).filter((t) => !ADMISSION_TOLERATION_KEYS.has(t.key));
    return {
      ...spec,
      tolerations: tolerations.length > 0 ? tolerations : undefined,
      volumes: (spec['volumes'] as { name: string }[]).filter((v) => !v.name.startsWith(TOKEN_VOLUME_PREFIX)),
      containers: pod.spec.containers.map((c) => ({ ...c, volumeMounts: (c['volumeMounts'] as Json[]).filter((m) => m['mountPath'] !== TOKEN_MOUNT_PATH) })),
    };
  }

  it.each([
    ['web-amd64', true],
    ['api-zone-a', true],
    // Its requests were copied from its limits: a Pod default too, so this pod is no template's.
    ['llm-server-gpu-a', false],
  ])('%s has the revision of the template it was created from: %s', (name, same) => {
    const pod = JSON.parse(readFileSync(`core/inplace/fixtures/pod-${name}.json`, 'utf8')) as {
      metadata: { labels: Record<string, string> };
      spec: Json & { containers: Json[] };
    };
    const revision = pod.metadata.labels[REVISION_LABEL];
    const rendered = distTemplates().find(([, t]) => t.metadata?.labels?.[REVISION_LABEL] === revision)?.[1];
    expect(rendered).toBeDefined();
    const created: PodTemplate = { metadata: rendered?.metadata, spec: asCreated(pod) };
    expect(created).not.toEqual(rendered);
    expect(templateRevision(created) === revision).toBe(same);
  });
});

describe('render', () => {
  it('renders the defaults the user spelled out, with the revision of the template without them', () => {
    const region = { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'a' }, spec: { matchLabels: { zone: 'a' } } };
    const ed = (template: Template) => ({
      apiVersion: API_VERSION,
      kind: 'ExtendedDeployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template, regions: [{ name: 'a' }] },
    });
    const render = (template: Template) => {
      const result = renderSet([region, ed(template)]);
      if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
      const rendered = result.value.extendedDeployments[0]?.regions[0];
      return { revision: rendered?.revision, template: (rendered?.workload['spec'] as { template: Template }).template };
    };
    const spelled = render(
      edited(
        (t) => (t.spec['dnsPolicy'] = 'ClusterFirst'),
        (_t, c) => (c['resources'] = {}),
      ),
    );
    expect(spelled.revision).toBe(render(plain()).revision);
    expect(spelled.template.spec['dnsPolicy']).toBe('ClusterFirst');
    expect(spelled.template.spec.containers[0]?.['resources']).toEqual({});
  });
});
