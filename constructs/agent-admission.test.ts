import { Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import {
  GROUP_RECORD_ANNOTATION,
  IN_PLACE_READINESS_GATE,
  KEEPER_LABEL,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
  SWAP_STATE_ANNOTATION,
} from '../core/labels.js';
import { planHistory } from '../core/history/revisions.js';
import { keeperObject } from '../core/rollout/keeper.js';
import { agentAdmissionPolicies, type AgentAdmissionPolicySpec } from './agent-admission.js';
import { AGENT, admit } from './admission-test-support.js';
import { AgentInstall, type AgentInstallProps } from './index.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec?: unknown };
type Json = Record<string, unknown>;
type Container = { name: string; image: string };
interface Meta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences?: Json[];
  finalizers?: string[];
}
interface PodFixture extends Json {
  metadata: Meta;
  spec: { containers: Container[]; initContainers?: Container[]; tolerations: Json[]; [field: string]: unknown };
  status: { conditions: Json[]; containerStatuses: Json[]; [field: string]: unknown };
}
interface WorkloadFixture extends Json {
  metadata: Meta;
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: Json; spec: { containers: Container[] } };
    [field: string]: unknown;
  };
}

function render(props: Partial<AgentInstallProps> = {}, chartNamespace?: string): Obj[] {
  const chart = new Chart(Testing.app(), 'agent-install', chartNamespace !== undefined ? { namespace: chartNamespace } : {});
  new AgentInstall(chart, 'agent', { image: 'registry.example.com/edctl:1.0.0', ...props });
  return Testing.synth(chart) as Obj[];
}

const policies = Object.fromEntries(
  agentAdmissionPolicies({ namespace: 'extended-deployment-system', name: 'extended-deployment-agent' }).map((p) => [p.resource, p.policy]),
);
const pods = policies['pods']!;
const replicaSets = policies['replicasets']!;
const deployments = policies['deployments']!;
const statefulSets = policies['statefulsets']!;
const history = policies['controllerrevisions']!;
const message = (policy: AgentAdmissionPolicySpec, fragment: string) => {
  const found = policy.validations.find((v) => v.message.includes(fragment));
  if (!found) throw new Error(`no rule about ${fragment}`);
  return found.message;
};

const labels = { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd64', [REVISION_LABEL]: 'r1', app: 'web' };

/** A pod of an ExtendedDeployment with in-place updates on, as the API server stores it. */
function pod(): PodFixture {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-amd64-x',
      namespace: 'shop',
      labels: { ...labels },
      annotations: { 'team.example/owner': 'shop' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-amd64', uid: 'u1', controller: true }],
    },
    spec: {
      containers: [{ name: 'web', image: 'registry.example/web:1' }],
      readinessGates: [{ conditionType: IN_PLACE_READINESS_GATE }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      terminationGracePeriodSeconds: 30,
      nodeName: 'n1',
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.7',
      podIPs: [{ ip: '10.0.0.7' }],
      conditions: [
        { type: IN_PLACE_READINESS_GATE, status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      containerStatuses: [{ name: 'web', ready: true, image: 'registry.example/web:1' }],
    },
  };
}

/** A copy of `o` changed by `change`. */
function changed<T>(o: T, change: (copy: T) => void): T {
  const copy = structuredClone(o);
  change(copy);
  return copy;
}

/** A regional workload as rendered (core/render.ts), as the API server stores it. */
function workload(kind: 'ReplicaSet' | 'Deployment' | 'StatefulSet'): WorkloadFixture {
  const selector = { matchLabels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd64' } };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: {
      name: 'web-amd64',
      namespace: 'shop',
      labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd64', app: 'web' },
      annotations: { 'deployment.kubernetes.io/revision': '1' },
    },
    spec: {
      replicas: 3,
      minReadySeconds: 0,
      selector,
      template: { metadata: { labels: { ...labels } }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] } },
      ...(kind === 'Deployment' && { strategy: { type: 'RollingUpdate' }, revisionHistoryLimit: 10, paused: false }),
      ...(kind === 'StatefulSet' && {
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
        revisionHistoryLimit: 2,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      }),
    },
  };
}

/** A revision of ExtendedDeployment web's history as the agent records it (core/history/revisions.ts), as the API server stores it. */
type RevisionFixture = Json & { metadata: Meta; revision: number };
function revision(): RevisionFixture {
  const [action] = planHistory({
    ed: { metadata: { name: 'web', namespace: 'shop', uid: 'u-web' } },
    historyLimit: 1,
    rolloutRevision: 'r1',
    regions: [{ region: 'amd64', targetRevision: 'a1', template: { metadata: { labels: { [REVISION_LABEL]: 'a1' } } } }],
    existing: [],
    now: 0,
  });
  if (action?.kind !== 'create') throw new Error('no revision recorded');
  return { ...structuredClone(action.object), metadata: { annotations: {}, ...structuredClone(action.object.metadata), uid: 'u-r1' } } as never;
}

const update = { operation: 'UPDATE' };

/** A keeper as the agent creates it (keeperObject), with what the API server adds. */
function keeper(): WorkloadFixture {
  const template = { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] } };
  const made = keeperObject(
    { kind: 'createKeeper', region: 'amd64', workload: 'web-amd64-r1', replicas: 0, revision: 'r1', template, owner: { name: 'web', uid: 'u1' } },
    'shop',
  );
  const copy = structuredClone(made) as unknown as WorkloadFixture;
  return { ...copy, metadata: { ...copy.metadata, annotations: {} } };
}

/** Each change of `old`, as an update (of `subResource`), is refused by exactly one rule: the one about `fragment`. */
function expectRefused<T>(
  policy: AgentAdmissionPolicySpec,
  fragment: string,
  old: T & Json,
  changes: Record<string, (copy: T) => void>,
  subResource = '',
): void {
  const rule = message(policy, fragment);
  for (const [what, change] of Object.entries(changes))
    expect(admit(policy, { operation: 'UPDATE', subResource }, changed(old, change), old), what).toEqual([rule]);
}

describe('agent admission policies: rendered objects', () => {
  it('renders a policy and a Deny binding per kind the agent writes, after the RBAC objects, in the sync wave', () => {
    const objects = render();
    // The adoption freeze is no policy of the agent's writes (constructs/adoption-freeze.test.ts).
    const admission = objects.filter((o) => o.apiVersion === 'admissionregistration.k8s.io/v1' && o.metadata.name.startsWith('extended-deployment-agent'));
    expect(admission.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([
      'ValidatingAdmissionPolicy extended-deployment-agent-pods',
      'ValidatingAdmissionPolicyBinding extended-deployment-agent-pods',
      'ValidatingAdmissionPolicy extended-deployment-agent-replicasets',
      'ValidatingAdmissionPolicyBinding extended-deployment-agent-replicasets',
      'ValidatingAdmissionPolicy extended-deployment-agent-deployments',
      'ValidatingAdmissionPolicyBinding extended-deployment-agent-deployments',
      'ValidatingAdmissionPolicy extended-deployment-agent-statefulsets',
      'ValidatingAdmissionPolicyBinding extended-deployment-agent-statefulsets',
      'ValidatingAdmissionPolicy extended-deployment-agent-controllerrevisions',
      'ValidatingAdmissionPolicyBinding extended-deployment-agent-controllerrevisions',
    ]);
    for (const o of admission) {
      expect(o.metadata.namespace, o.metadata.name).toBeUndefined();
      expect(o.metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBe('-2');
    }
    for (const o of admission.filter((p) => p.kind === 'ValidatingAdmissionPolicyBinding')) {
      expect(o.spec).toEqual({ policyName: o.metadata.name, validationActions: ['Deny'] });
    }
    for (const o of admission.filter((p) => p.kind === 'ValidatingAdmissionPolicy')) {
      const spec = o.spec as AgentAdmissionPolicySpec;
      expect(spec.failurePolicy).toBe('Fail');
      expect(spec.matchConditions).toEqual([{ name: 'agent-service-account', expression: `request.userInfo.username == '${AGENT}'` }]);
      // Refused as RBAC refuses (403): the agent ignores a 422 on pod writes (another pod took the name).
      for (const v of spec.validations) expect(v.reason).toBe('Forbidden');
    }
    const rules = admission
      .filter((p) => p.kind === 'ValidatingAdmissionPolicy')
      .map((o) => (o.spec as AgentAdmissionPolicySpec).matchConstraints.resourceRules);
    expect(rules).toEqual([
      [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
      [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['replicasets'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
      [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
      [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['statefulsets'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
      [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['controllerrevisions'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    ]);
    // Cluster-scoped also in a namespaced chart.
    for (const o of render({}, 'somewhere').filter((p) => p.apiVersion === 'admissionregistration.k8s.io/v1')) expect(o.metadata.namespace).toBeUndefined();
  });

  it('names the ServiceAccount it renders, and renders the same bytes every time', () => {
    const objects = render({ namespace: 'ops', name: 'ed' });
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy')!;
    expect(policy.metadata.name).toBe('ed-pods');
    expect((policy.spec as AgentAdmissionPolicySpec).matchConditions[0]?.expression).toBe("request.userInfo.username == 'system:serviceaccount:ops:ed'");
    expect(JSON.stringify(render())).toBe(JSON.stringify(render()));
  });

  it('is left out with admissionPolicy: false', () => {
    expect(
      render({ admissionPolicy: false })
        .filter((o) => o.apiVersion.startsWith('admissionregistration'))
        .map((o) => o.metadata.name),
    ).toEqual(['extendeddeployment-adoption-freeze', 'extendeddeployment-adoption-freeze']);
    expect(render({ admissionPolicy: false, adoptionFreeze: false }).filter((o) => o.apiVersion.startsWith('admissionregistration'))).toEqual([]);
  });

  it("with watchNamespaces, refuses the agent's writes in every other namespace", () => {
    const scoped = render({ watchNamespaces: ['shop', 'pay'], adoptionFreeze: false }).filter((o) => o.kind === 'ValidatingAdmissionPolicy');
    expect(scoped).toHaveLength(5);
    for (const o of scoped) {
      const spec = o.spec as AgentAdmissionPolicySpec;
      const rule = "request.namespace in ['shop', 'pay']";
      expect(spec.validations.map((v) => v.expression)).toContain(rule);
      const elsewhere = admit(
        spec,
        { operation: 'DELETE', namespace: 'kube-system' },
        null,
        o.metadata.name.endsWith('-pods') ? pod() : o.metadata.name.endsWith('-controllerrevisions') ? revision() : workload('ReplicaSet'),
      );
      expect(elsewhere, o.metadata.name).toContain('the agent writes only in the namespaces it watches: shop, pay');
    }
    const [pods] = scoped;
    expect(admit(pods!.spec as AgentAdmissionPolicySpec, { operation: 'DELETE', namespace: 'shop' }, null, pod())).toEqual([]);
    expect(admit(pods!.spec as AgentAdmissionPolicySpec, { operation: 'DELETE', namespace: 'pay' }, null, pod())).toEqual([]);
  });
});

describe('agent admission policies: pods', () => {
  it("applies only to the agent's ServiceAccount", () => {
    expect(admit(pods, { operation: 'CREATE', username: 'system:serviceaccount:kube-system:replicaset-controller' }, pod(), null)).toEqual(['(not matched)']);
  });

  it('lets the agent make each of its pod writes (agent/actuators.ts)', () => {
    const old = pod();
    const writes: Record<string, PodFixture> = {
      markOld: changed(old, (p) =>
        Object.assign(p.metadata.annotations, { [POD_DELETION_COST_ANNOTATION]: '-100', [MARKED_AT_ANNOTATION]: '2026-01-01T00:00:00Z' }),
      ),
      swapBegin: changed(old, (p) => (p.metadata.annotations[SWAP_STATE_ANNOTATION] = '{"phase":"draining"}')),
      swapImages: changed(old, (p) => {
        p.metadata.annotations[SWAP_STATE_ANNOTATION] = '{"phase":"swapping"}';
        p.metadata.labels[REVISION_LABEL] = 'r2';
        p.spec.containers[0]!.image = 'registry.example/web:2';
      }),
      closeGate: changed(old, (p) => (p.status.conditions[0] = { type: IN_PLACE_READINESS_GATE, status: 'False', reason: 'StartInPlaceUpdate' })),
    };
    for (const [write, object] of Object.entries(writes)) expect(admit(pods, update, object, old), write).toEqual([]);
    const marked = writes['markOld']!;
    expect(
      admit(
        pods,
        update,
        changed(marked, (p) => delete p.metadata.annotations[MARKED_AT_ANNOTATION]),
        marked,
      ),
      'unmark',
    ).toEqual([]);
    expect(admit(pods, { operation: 'UPDATE', subResource: 'status' }, writes['closeGate']!, old), 'closeGate on pods/status').toEqual([]);
    expect(admit(pods, { operation: 'DELETE' }, null, old), 'deletePod').toEqual([]);
    // Pods without annotations at all (the common case: templates rarely carry any).
    const bare = changed(old, (p) => delete (p.metadata as Partial<Meta>).annotations);
    expect(
      admit(
        pods,
        update,
        changed(bare, (p) => (p.metadata.annotations = { [POD_DELETION_COST_ANNOTATION]: '-100' })),
        bare,
      ),
      'markOld, no annotations before',
    ).toEqual([]);
  });

  it('refuses to create a pod, but as a dry run (the proof of an adoption freeze)', () => {
    expect(admit(pods, { operation: 'CREATE' }, pod(), null)).toEqual([message(pods, 'never creates pods')]);
    expect(admit(pods, { operation: 'CREATE', dryRun: true }, pod(), null)).toEqual([]);
  });

  describe('adoption', () => {
    // A pod of Deployment web's ReplicaSet, as a region adopts it (core/adoption, agent/adoption.ts adoptPod).
    const old = changed(pod(), (p) => {
      p.metadata.labels = { app: 'web', 'pod-template-hash': '5d8f' };
      p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'o1', controller: true, blockOwnerDeletion: true }];
    });
    const adopted = (name = 'web-amd64') =>
      changed(old, (p) => {
        p.metadata.labels = { ...labels };
        p.metadata.annotations = { ...p.metadata.annotations, 'extendeddeployment.io/adopted-from': 'Deployment/web' };
        p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: 'n1', controller: true, blockOwnerDeletion: true }];
      });

    it('moves a pod of no ExtendedDeployment to the ReplicaSet its new labels name', () => {
      expect(admit(pods, update, adopted(), old)).toEqual([]);
    });

    it('refuses a move to another ReplicaSet, without the adopted-from record, or of a finalizer', () => {
      expect(admit(pods, update, adopted('kube-dns'), old)).toEqual([
        message(pods, 'labelled'),
        message(pods, 'no pod label'),
        message(pods, 'ownerReferences'),
      ]);
      const unrecorded = changed(adopted(), (p) => delete p.metadata.annotations['extendeddeployment.io/adopted-from']);
      expect(admit(pods, update, unrecorded, old)).toEqual([message(pods, 'labelled'), message(pods, 'no pod label'), message(pods, 'ownerReferences')]);
      const finalized = changed(adopted(), (p) => (p.metadata.finalizers = ['x']));
      expect(admit(pods, update, finalized, old)).toEqual([message(pods, 'ownerReferences')]);
    });

    it("refuses to take a region's pod into another region", () => {
      const ours = changed(pod(), (p) => (p.metadata.annotations['extendeddeployment.io/adopted-from'] = 'Deployment/web'));
      const moved = changed(ours, (p) => {
        p.metadata.labels = { ...labels, [REGION_LABEL]: 'arm64' };
        p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-arm64', uid: 'n2', controller: true }];
      });
      expect(admit(pods, update, moved, ours)).toEqual([message(pods, 'no pod label'), message(pods, 'ownerReferences')]);
    });
  });

  it('refuses to change or delete a pod without the ExtendedDeployment labels', () => {
    const unrelated = changed(pod(), (p) => (p.metadata.labels = { app: 'coredns' }));
    const rule = message(pods, 'labelled');
    expect(admit(pods, { operation: 'DELETE' }, null, unrelated)).toEqual([rule]);
    expect(
      admit(
        pods,
        update,
        changed(unrelated, (p) => (p.metadata.annotations[POD_DELETION_COST_ANNOTATION] = '-100')),
        unrelated,
      ),
    ).toEqual([rule]);
    // One of the two labels is not enough.
    const nameOnly = changed(pod(), (p) => delete p.metadata.labels[REGION_LABEL]);
    expect(admit(pods, { operation: 'DELETE' }, null, nameOnly)).toEqual([rule]);
  });

  it('refuses label changes other than the revision label, also through pods/status', () => {
    const changes = {
      'a label changed': (p: PodFixture) => (p.metadata.labels['app'] = 'other'),
      'a label added': (p: PodFixture) => (p.metadata.labels['extra'] = 'x'),
      'a label removed': (p: PodFixture) => delete p.metadata.labels['app'],
    };
    expectRefused(pods, 'no pod label', pod(), changes);
    expectRefused(pods, 'no pod label', pod(), { 'the region label': (p) => (p.metadata.labels[REGION_LABEL] = 'arm64') }, 'status');
  });

  it("refuses annotation changes other than the agent's own", () => {
    expectRefused(pods, 'no pod annotation', pod(), {
      'an annotation changed': (p) => (p.metadata.annotations['team.example/owner'] = 'mallory'),
      'an annotation added': (p) => (p.metadata.annotations['kubectl.kubernetes.io/restartedAt'] = 'now'),
      'an annotation removed': (p) => delete p.metadata.annotations['team.example/owner'],
    });
  });

  it('refuses owner reference and finalizer changes', () => {
    expectRefused(pods, 'ownerReferences', pod(), {
      'the controller reference dropped': (p) => delete p.metadata.ownerReferences,
      'a finalizer added': (p) => (p.metadata.finalizers = ['example.com/hold']),
    });
  });

  it('refuses every spec change the API allows besides images', () => {
    expectRefused(
      pods,
      'no pod spec field',
      changed(pod(), (p) => (p.spec.initContainers = [{ name: 'init', image: 'registry.example/init:1' }])),
      {
        'an init container image': (p) => (p.spec.initContainers![0]!.image = 'evil:1'),
        'a toleration': (p) => p.spec.tolerations.push({ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }),
        activeDeadlineSeconds: (p) => (p.spec['activeDeadlineSeconds'] = 1),
        terminationGracePeriodSeconds: (p) => (p.spec['terminationGracePeriodSeconds'] = 1),
        nodeSelector: (p) => (p.spec['nodeSelector'] = { 'kubernetes.io/hostname': 'control-plane' }),
      },
    );
  });

  it('refuses status changes other than the InPlaceUpdateReady condition', () => {
    const changes: Record<string, (p: PodFixture) => void> = {
      podIP: (p) => (p.status['podIP'] = '10.9.9.9'),
      phase: (p) => (p.status['phase'] = 'Failed'),
      'the Ready condition': (p) => (p.status.conditions[1] = { type: 'Ready', status: 'False' }),
      'a condition added': (p) => p.status.conditions.push({ type: 'DisruptionTarget', status: 'True' }),
      'container readiness': (p) => (p.status.containerStatuses[0]!['ready'] = false),
    };
    expectRefused(pods, 'no pod status', pod(), changes, 'status');
  });

  it('swaps images and sets InPlaceUpdateReady only on pods with the readiness gate', () => {
    const rule = message(pods, 'readiness gate');
    const ungated = changed(pod(), (p) => {
      delete p.spec['readinessGates'];
      p.status.conditions.splice(0, 1);
    });
    expect(
      admit(
        pods,
        update,
        changed(ungated, (p) => (p.spec.containers[0]!.image = 'evil:1')),
        ungated,
      ),
    ).toEqual([rule]);
    const gate = { type: IN_PLACE_READINESS_GATE, status: 'False' };
    expect(
      admit(
        pods,
        { operation: 'UPDATE', subResource: 'status' },
        changed(ungated, (p) => p.status.conditions.push(gate)),
        ungated,
      ),
    ).toEqual([rule]);
    // The agent still marks ungated pods.
    expect(
      admit(
        pods,
        update,
        changed(ungated, (p) => (p.metadata.annotations[POD_DELETION_COST_ANNOTATION] = '-100')),
        ungated,
      ),
    ).toEqual([]);
  });
});

describe('agent admission policies: ReplicaSets, Deployments and StatefulSets', () => {
  it("lets the agent scale, pause a Deployment, and move a StatefulSet's partition", () => {
    const rs = workload('ReplicaSet');
    expect(
      admit(
        replicaSets,
        update,
        changed(rs, (w) => (w.spec.replicas = 5)),
        rs,
      ),
    ).toEqual([]);
    const d = workload('Deployment');
    expect(
      admit(
        deployments,
        update,
        changed(d, (w) => Object.assign(w.spec, { replicas: 0, paused: true })),
        d,
      ),
    ).toEqual([]);
    const sts = workload('StatefulSet');
    expect(
      admit(
        statefulSets,
        update,
        changed(sts, (w) => Object.assign(w.spec, { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } })),
        sts,
      ),
    ).toEqual([]);
  });

  it('refuses to create or delete a workload', () => {
    for (const [policy, kind, fragment] of [
      [replicaSets, 'ReplicaSet', 'only keepers'],
      [deployments, 'Deployment', 'never creates or deletes'],
      [statefulSets, 'StatefulSet', 'never creates or deletes'],
    ] as const) {
      const rule = message(policy, fragment);
      expect(admit(policy, { operation: 'CREATE' }, workload(kind), null), kind).toEqual([rule]);
      expect(admit(policy, { operation: 'DELETE' }, null, workload(kind)), kind).toEqual([rule]);
    }
  });

  it('lets the agent create, scale and delete a keeper as core makes it (core/rollout/keeper.ts)', () => {
    const made = keeper();
    expect(admit(replicaSets, { operation: 'CREATE' }, made, null)).toEqual([]);
    expect(
      admit(
        replicaSets,
        update,
        changed(made, (k) => (k.spec.replicas = 2)),
        made,
      ),
    ).toEqual([]);
    expect(admit(replicaSets, { operation: 'DELETE' }, null, made)).toEqual([]);
    expect(admit(deployments, { operation: 'CREATE' }, { ...made, kind: 'Deployment' }, null)).toEqual([message(deployments, 'never creates or deletes')]);
  });

  it('refuses to create or delete a ReplicaSet that is not exactly a keeper', () => {
    const rule = message(replicaSets, 'only keepers');
    const unlike: Record<string, (k: WorkloadFixture) => void> = {
      'no keeper mark': (k) => delete k.metadata.labels[KEEPER_LABEL],
      'no revision label': (k) => delete k.metadata.labels[REVISION_LABEL],
      'not controlled by an ExtendedDeployment': (k) => (k.metadata.ownerReferences = [{ ...k.metadata.ownerReferences![0], kind: 'Deployment' }]),
      'controlled by another ExtendedDeployment': (k) => (k.metadata.ownerReferences = [{ ...k.metadata.ownerReferences![0], name: 'shop' }]),
      'not the controller': (k) => (k.metadata.ownerReferences = [{ ...k.metadata.ownerReferences![0], controller: false }]),
      'a wider selector': (k) => delete k.spec.selector.matchLabels[REVISION_LABEL],
      'a selector of other labels': (k) => (k.spec.selector.matchLabels = { ...k.spec.selector.matchLabels, [REVISION_LABEL]: 'other' }),
      'a selector with expressions': (k) => ((k.spec.selector as Json)['matchExpressions'] = [{ key: 'app', operator: 'Exists' }]),
    };
    for (const [what, change] of Object.entries(unlike)) {
      const object = changed(keeper(), change);
      expect(admit(replicaSets, { operation: 'CREATE' }, object, null), `create: ${what}`).toEqual([rule]);
      expect(admit(replicaSets, { operation: 'DELETE' }, null, object), `delete: ${what}`).toEqual([rule]);
    }
  });

  it('refuses to change a workload without the ExtendedDeployment labels', () => {
    for (const [policy, kind] of [
      [replicaSets, 'ReplicaSet'],
      [deployments, 'Deployment'],
      [statefulSets, 'StatefulSet'],
    ] as const) {
      const unrelated = changed(workload(kind), (w) => (w.metadata.labels = { app: 'coredns' }));
      expect(
        admit(
          policy,
          update,
          changed(unrelated, (w) => (w.spec.replicas = 0)),
          unrelated,
        ),
        kind,
      ).toEqual([message(policy, 'labelled')]);
    }
  });

  it('refuses to change the template, the selector or any other spec field', () => {
    expectRefused(replicaSets, 'only spec.replicas', workload('ReplicaSet'), {
      'the template': (w) => (w.spec.template.spec.containers[0]!.image = 'evil:1'),
      'the selector': (w) => (w.spec.selector.matchLabels = { app: 'web' }),
      minReadySeconds: (w) => (w.spec['minReadySeconds'] = 600),
    });
    expectRefused(deployments, 'only spec.replicas and spec.paused', workload('Deployment'), {
      'the template': (w) => (w.spec.template.spec.containers[0]!.image = 'evil:1'),
      strategy: (w) => (w.spec['strategy'] = { type: 'Recreate' }),
      progressDeadlineSeconds: (w) => (w.spec['progressDeadlineSeconds'] = 1),
    });
    expectRefused(statefulSets, 'only spec.replicas and spec.updateStrategy.rollingUpdate.partition', workload('StatefulSet'), {
      'the template': (w) => (w.spec.template.spec.containers[0]!.image = 'evil:1'),
      'the claim templates': (w) => (w.spec['volumeClaimTemplates'] = []),
      serviceName: (w) => (w.spec['serviceName'] = 'other'),
      podManagementPolicy: (w) => (w.spec['podManagementPolicy'] = 'Parallel'),
    });
    expectRefused(statefulSets, 'only the partition', workload('StatefulSet'), {
      'the update type': (w) => (w.spec['updateStrategy'] = { type: 'OnDelete' }),
      'the unavailability budget': (w) => (w.spec['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { partition: 3, maxUnavailable: 3 } }),
    });
  });

  it("lets the agent write a ReplicaSet's group record with its replicas, and no other annotation (nor on other kinds)", () => {
    const rs = workload('ReplicaSet');
    const recorded = changed(rs, (w) => ((w.spec.replicas = 4), (w.metadata.annotations[GROUP_RECORD_ANNOTATION] = '{"group":2}')));
    expect(admit(replicaSets, update, recorded, rs), 'set').toEqual([]);
    expect(
      admit(
        replicaSets,
        update,
        changed(recorded, (w) => (w.metadata.annotations[GROUP_RECORD_ANNOTATION] = '{"group":3}')),
        recorded,
      ),
      'changed',
    ).toEqual([]);
    expect(
      admit(
        replicaSets,
        update,
        changed(recorded, (w) => delete w.metadata.annotations[GROUP_RECORD_ANNOTATION]),
        recorded,
      ),
      'dropped',
    ).toEqual([]);
    expectRefused(replicaSets, 'labels, annotations', recorded, {
      'another annotation beside it': (w) => (w.metadata.annotations['x'] = 'y'),
    });
    for (const [policy, kind] of [
      [deployments, 'Deployment'],
      [statefulSets, 'StatefulSet'],
    ] as const) {
      expectRefused(policy, 'labels, annotations', workload(kind), {
        [`${kind}: the group record`]: (w) => (w.metadata.annotations[GROUP_RECORD_ANNOTATION] = '{"group":2}'),
      });
    }
  });

  it('refuses metadata changes', () => {
    for (const [policy, kind] of [
      [replicaSets, 'ReplicaSet'],
      [deployments, 'Deployment'],
      [statefulSets, 'StatefulSet'],
    ] as const) {
      expectRefused(policy, 'labels, annotations', workload(kind), {
        [`${kind}: a label`]: (c) => (c.metadata.labels['app'] = 'other'),
        [`${kind}: an annotation`]: (c) => (c.metadata.annotations['x'] = 'y'),
        [`${kind}: an owner`]: (c) => (c.metadata.ownerReferences = [{ kind: 'Deployment', name: 'x', uid: 'u', controller: true }]),
      });
    }
  });
});

describe('agent admission policies: ControllerRevisions', () => {
  it('lets the agent record, renumber and prune the history of an ExtendedDeployment', () => {
    const recorded = revision();
    expect(admit(history, { operation: 'CREATE' }, recorded, null)).toEqual([]);
    expect(
      admit(
        history,
        update,
        changed(recorded, (r) => ((r.revision = 7), (r.metadata.annotations['x'] = 'y'))),
        recorded,
      ),
    ).toEqual([]);
    expect(admit(history, { operation: 'DELETE' }, null, recorded)).toEqual([]);
  });

  it("refuses to write a revision another controller owns, or one that does not carry its owner's name", () => {
    const writes = message(history, 'writes only');
    const changes = message(history, 'changes or deletes only');
    const foreigners: Record<string, (r: RevisionFixture) => void> = {
      "a StatefulSet's": (r) =>
        void (r.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u-sts', controller: true }]),
      'an unowned': (r) => void delete r.metadata.ownerReferences,
      "another ExtendedDeployment's name label on a": (r) => void (r.metadata.labels[NAME_LABEL] = 'shop'),
      'a non-controller owner on a': (r) => void (r.metadata.ownerReferences = [{ ...r.metadata.ownerReferences![0]!, controller: false }]),
    };
    for (const [what, change] of Object.entries(foreigners)) {
      const foreign = changed(revision(), change);
      expect(admit(history, { operation: 'CREATE' }, foreign, null), `create ${what}`).toEqual([writes]);
      expect(admit(history, { operation: 'DELETE' }, null, foreign), `delete ${what}`).toEqual([changes]);
      expect(
        admit(
          history,
          update,
          changed(foreign, (r) => (r.revision = 9)),
          foreign,
        ),
        `update ${what}`,
      ).toEqual([writes, changes]);
    }
  });

  it('refuses to change the labels or the owner of a revision', () => {
    expectRefused(history, "ControllerRevision's labels", revision(), {
      'a label': (r) => (r.metadata.labels['team'] = 'shop'),
      'a finalizer': (r) => (r.metadata.finalizers = ['x']),
      'another owner, the same ExtendedDeployment': (r) => (r.metadata.ownerReferences = [{ ...r.metadata.ownerReferences![0]!, uid: 'u-other' }]),
    });
  });
});

describe('agent admission policies: coverage', () => {
  it('has a test above that fails without each rule', () => {
    // Every rule's message, by the fragment the tests above look it up with (a new rule needs a test and a fragment).
    const fragments: Record<string, readonly string[]> = {
      pods: ['never creates pods', 'labelled', 'no pod label', 'no pod annotation', 'ownerReferences', 'no pod spec field', 'no pod status', 'readiness gate'],
      replicasets: ['only keepers', 'labelled', 'labels, annotations', 'only spec.replicas'],
      deployments: ['never creates or deletes', 'labelled', 'labels, annotations', 'only spec.replicas and spec.paused'],
      statefulsets: ['never creates or deletes', 'labelled', 'labels, annotations', 'only spec.replicas and spec.updateStrategy', 'only the partition'],
      controllerrevisions: ['writes only', 'changes or deletes only', "ControllerRevision's labels"],
    };
    for (const [resource, policy] of Object.entries(policies)) {
      expect(
        policy.validations.map((v) => fragments[resource]?.filter((f) => v.message.includes(f)).length),
        resource,
      ).toEqual(policy.validations.map(() => 1));
    }
  });
});
