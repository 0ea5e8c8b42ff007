// The admission proof: the rendered ValidatingAdmissionPolicies (dist/agent-install.k8s.yaml, applied with the rendered
// RBAC by agent-identity.ts and bound to the test's ServiceAccount) hold the agent's token to the agent's own writes
// on a real API server. As that ServiceAccount (impersonated), the writes agent/actuators.ts makes succeed through
// the agent's own code, on a labelled pod, ReplicaSet and Deployment; and what a stolen token would try is refused,
// each with the policy and rule that refused it: an image in kube-system, an unrelated workload, a template, a
// pod's labels, a pod's readiness, another controller's ControllerRevision (and a new pod by server-side apply, which
// RBAC already refuses).
import { AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod, type V1ReplicaSet } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { performAction } from '../../agent/actuators.js';
import { FIELD_MANAGER as AGENT_FIELD_MANAGER } from '../../agent/field-manager.js';
import { AGENT_PERMISSIONS } from '../../constructs/agent-rbac.js';
import {
  GROUP_RECORD_ANNOTATION,
  IN_PLACE_READINESS_GATE,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
  SWAP_STATE_ANNOTATION,
} from '../../core/labels.js';
import type { WorkloadKind } from '../../core/kube/objects.js';
import type { RolloutAction } from '../../core/rollout/actions.js';
import { parseGroupRecord } from '../../core/rollout/group-record.js';
import { renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { clients, errorCode, errorMessage, FIELD_MANAGER, ObjectApi, readPod, test, testPod, uniqueName, waitFor } from './helpers.js';

const smp = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const edLabels = { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd64' };
// The pods are the lab admin's own, owned by no workload: labels no fixture workload selects, or its ReplicaSet
// controller would adopt them and scale them away.
const podLabels = { [NAME_LABEL]: 'web', [REGION_LABEL]: 'standalone' };

/** A rendered-like ReplicaSet (labels, selector and template labels as core/render.ts writes them), or an unrelated one. */
function replicaSet(name: string, labels: Record<string, string>): V1ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: { metadata: { labels: { ...labels, [REVISION_LABEL]: 'r1' } }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] } },
    },
  };
}

/** An ExtendedDeployment `web` for a keeper to belong to (no agent acts on it here). */
function ownerEd(namespace: string) {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] } };
  return {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace },
    spec: { selector: { matchLabels: { app: 'web' } }, template, regions: [{ name: 'amd64', replicas: 1 }] },
  };
}

/** What a refused request answered: its HTTP code and message. */
async function refusal(request: Promise<unknown>): Promise<{ code: number | undefined; message: string }> {
  try {
    await request;
  } catch (error) {
    return { code: errorCode(error), message: errorMessage(error) };
  }
  throw new Error('the request was allowed');
}

test("the agent's identity changes only its own fields of ExtendedDeployment objects; everything else is refused by the policy", async ({ ns }) => {
  const suffix = uniqueName('a').slice(2);
  const system = uniqueName('ed-admission-probe');
  let identity: AgentIdentity | undefined;
  try {
    identity = await renderedIdentity(ns, suffix);
    const { kubeConfig: kc, subject } = identity;
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    // The agent's own actuators, as the agent calls them (a variable, not a literal: whatever else ActuatorClients takes).
    const actuators = { core, apps, custom: kc.makeApiClient(CustomObjectsApi), now: () => Date.now() };
    const act = (kind: WorkloadKind, action: RolloutAction) => performAction(actuators, ns, kind, action);

    // The policies as stored: accepted by the API server, and type-checked against the Pod, ReplicaSet and Deployment
    // schemas without a warning.
    const policies = identity.rbac.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.metadata?.name ?? '');
    expect(policies).toEqual(
      ['pods', 'replicasets', 'deployments', 'statefulsets', 'controllerrevisions'].map((r) => `extended-deployment-agent-${r}-${suffix}`),
    );
    for (const name of policies) {
      const status = await waitFor(`${name} type-checked`, async () => {
        const stored = await clients().objects.read<{
          metadata: { generation?: number };
          status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } };
        }>({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name } });
        return stored.status?.typeChecking && stored.status.observedGeneration === stored.metadata.generation ? stored.status : undefined;
      });
      expect(status.typeChecking?.expressionWarnings, name).toBeUndefined();
    }
    /** The refusal of `rule` (a fragment of its message) of the policy for `resource`, as the API server words it. */
    const byPolicy = (resource: string, rule: string) => {
      const policy = identity!.rbac.find((o) => o.metadata?.name === `extended-deployment-agent-${resource}-${suffix}`) as
        { spec: { validations: { message: string }[] } } | undefined;
      const message = policy?.spec.validations.find((v) => v.message.includes(rule))?.message;
      if (!message) throw new Error(`no ${resource} rule about ${rule}`);
      const name = `extended-deployment-agent-${resource}-${suffix}`;
      return { code: 403, message: expect.stringContaining(`ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: ${message}`) };
    };

    // Fixtures, made by the lab admin: a labelled gated pod (in-place updates on), an unrelated pod, a labelled
    // ReplicaSet and Deployment, an unrelated ReplicaSet and Deployment, and a pod in kube-system.
    const admin = clients();
    const gated = testPod('web-standalone-a', { readinessGates: [{ conditionType: IN_PLACE_READINESS_GATE }] }, { ...podLabels, [REVISION_LABEL]: 'r1' });
    const created = await admin.core.createNamespacedPod({ namespace: ns, body: gated });
    await admin.core.createNamespacedPod({ namespace: ns, body: testPod('unrelated-pod') });
    await admin.core.createNamespacedPod({ namespace: 'kube-system', body: testPod(system) });
    await admin.apps.createNamespacedReplicaSet({ namespace: ns, body: replicaSet('web-amd64', edLabels) });
    await admin.apps.createNamespacedReplicaSet({ namespace: ns, body: replicaSet('unrelated', { app: 'unrelated' }) });
    for (const [name, labels] of [
      ['web-arm64', { ...edLabels, [REGION_LABEL]: 'arm64' }],
      ['unrelated', { app: 'unrelated' }],
    ] as const) {
      const { kind: _kind, ...rs } = replicaSet(name, labels);
      const { selector, template } = rs.spec!;
      await admin.apps.createNamespacedDeployment({
        namespace: ns,
        body: { ...rs, kind: 'Deployment', spec: { replicas: 0, selector, template: template!, paused: true } },
      });
    }
    for (const [name, labels] of [
      ['web-zone-a', { ...edLabels, [REGION_LABEL]: 'zone-a' }],
      ['unrelated', { app: 'unrelated' }],
    ] as const) {
      const { kind: _kind, ...rs } = replicaSet(name, labels);
      const { selector, template } = rs.spec!;
      await admin.apps.createNamespacedStatefulSet({
        namespace: ns,
        body: { ...rs, kind: 'StatefulSet', spec: { replicas: 0, selector, template: template!, updateStrategy: { type: 'RollingUpdate' } } },
      });
    }

    // Refused: a stolen token cannot run an image of its choice in kube-system. RBAC lets it (the ClusterRole grants
    // `patch` on pods in every namespace); the pods policy refuses it, the pod being no ExtendedDeployment's.
    const image = { spec: { containers: [{ name: 'app', image: 'registry.example/evil:1' }] } };
    const kubeSystem = await refusal(core.patchNamespacedPod({ namespace: 'kube-system', name: system, body: image }, smp));
    expect(kubeSystem).toEqual(byPolicy('pods', 'labelled'));
    console.log(`[admission] kube-system image patch: ${kubeSystem.code} ${kubeSystem.message}`);
    expect(await refusal(core.patchNamespacedPod({ namespace: ns, name: 'unrelated-pod', body: image }, smp))).toEqual(byPolicy('pods', 'labelled'));
    // Nor start a pod of its own, by a create or a server-side apply to a missing pod (authorized as `create`): RBAC
    // grants `create` for the adoption freeze's proof, the policy allows it only as a dry run, which persists nothing.
    const ssa = kc.makeApiClient(ObjectApi);
    const newPod = { ...testPod('started-by-agent'), metadata: { name: 'started-by-agent', namespace: ns, labels: { ...podLabels } } };
    expect(await refusal(ssa.patch(newPod, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply))).toEqual(
      byPolicy('pods', 'never creates'),
    );
    expect(await refusal(core.createNamespacedPod({ namespace: ns, body: newPod }))).toEqual(byPolicy('pods', 'never creates'));
    const dryRun = await core.createNamespacedPod({ namespace: ns, body: newPod, dryRun: 'All' });
    expect(dryRun.metadata?.name).toBe('started-by-agent');
    expect((await clients().core.listNamespacedPod({ namespace: ns, fieldSelector: 'metadata.name=started-by-agent' })).items).toEqual([]);
    // Nor scale or rewrite workloads that are not an ExtendedDeployment's.
    const scaleBody = (kind: string, name: string) => ({ apiVersion: 'apps/v1', kind, metadata: { name, namespace: ns }, spec: { replicas: 5 } });
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    const applyParams = (kind: string, name: string) => ({ namespace: ns, name, body: scaleBody(kind, name), fieldManager: FIELD_MANAGER, force: true });
    expect(await refusal(apps.patchNamespacedReplicaSet(applyParams('ReplicaSet', 'unrelated'), apply))).toEqual(byPolicy('replicasets', 'labelled'));
    expect(await refusal(apps.patchNamespacedDeployment(applyParams('Deployment', 'unrelated'), apply))).toEqual(byPolicy('deployments', 'labelled'));
    expect(await refusal(apps.patchNamespacedStatefulSet(applyParams('StatefulSet', 'unrelated'), apply))).toEqual(byPolicy('statefulsets', 'labelled'));
    // Nor run a template of its choice in a ReplicaSet of its own: the one it may create is a keeper (its create
    // permission is for those), and a labelled ReplicaSet that is not exactly one is refused.
    expect(await refusal(apps.createNamespacedReplicaSet({ namespace: ns, body: replicaSet('started-by-agent', edLabels) }))).toEqual(
      byPolicy('replicasets', 'only keepers'),
    );
    // Nor delete a workload Git rendered.
    expect(await refusal(apps.deleteNamespacedReplicaSet({ namespace: ns, name: 'web-amd64' }))).toEqual(byPolicy('replicasets', 'only keepers'));
    // Nor change what a labelled workload runs: its template (or selector).
    const template = { spec: { template: { spec: { containers: [{ name: 'web', image: 'registry.example/evil:1' }] } } } };
    expect(await refusal(apps.patchNamespacedReplicaSet({ namespace: ns, name: 'web-amd64', body: template }, smp))).toEqual(
      byPolicy('replicasets', 'only spec.replicas'),
    );
    expect(await refusal(apps.patchNamespacedDeployment({ namespace: ns, name: 'web-arm64', body: template }, smp))).toEqual(
      byPolicy('deployments', 'only spec.replicas'),
    );
    expect(await refusal(apps.patchNamespacedStatefulSet({ namespace: ns, name: 'web-zone-a', body: template }, smp))).toEqual(
      byPolicy('statefulsets', 'only spec.replicas'),
    );
    // Nor let a StatefulSet's controller replace every pod at once, or stop updating them (its update strategy's type).
    const onDelete = { spec: { updateStrategy: { type: 'OnDelete', rollingUpdate: null } } };
    expect(await refusal(apps.patchNamespacedStatefulSet({ namespace: ns, name: 'web-zone-a', body: onDelete }, smp))).toEqual(
      byPolicy('statefulsets', 'only the partition'),
    );
    // Nor move a labelled pod out of its ReplicaSet or Service (labels), or mark it Ready (status).
    const relabel = { metadata: { labels: { app: 'elsewhere' } } };
    expect(await refusal(core.patchNamespacedPod({ namespace: ns, name: gated.metadata!.name!, body: relabel }, smp))).toEqual(
      byPolicy('pods', 'no pod label'),
    );
    expect(await refusal(core.patchNamespacedPodStatus({ namespace: ns, name: gated.metadata!.name!, body: relabel }, smp))).toEqual(
      byPolicy('pods', 'no pod label'),
    );
    const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(await refusal(core.patchNamespacedPodStatus({ namespace: ns, name: gated.metadata!.name!, body: ready }, smp))).toEqual(
      byPolicy('pods', 'no pod status'),
    );
    // Nor rewrite or delete a ControllerRevision no ExtendedDeployment owns (a StatefulSet's holds what it rolls back
    // to), even one carrying the name label. (The agent's own history writes pass: the rollout suites record history.)
    const revision = { metadata: { name: 'other-history', labels: { [NAME_LABEL]: 'web' } }, data: {}, revision: 1 };
    await admin.apps.createNamespacedControllerRevision({ namespace: ns, body: revision });
    expect(await refusal(apps.deleteNamespacedControllerRevision({ namespace: ns, name: 'other-history' }))).toEqual(
      byPolicy('controllerrevisions', 'changes or deletes only'),
    );
    // (The API server names the first rule that refuses: the new object is no ExtendedDeployment's either.)
    expect(await refusal(apps.replaceNamespacedControllerRevision({ namespace: ns, name: 'other-history', body: { ...revision, revision: 2 } }))).toEqual(
      byPolicy('controllerrevisions', 'writes only'),
    );
    if (AGENT_PERMISSIONS.some((p) => p.resource === 'pods' && p.verbs.includes('delete'))) {
      // Pod DELETE is under the policy while RBAC grants it: not an unrelated pod.
      expect(await refusal(core.deleteNamespacedPod({ namespace: ns, name: 'unrelated-pod' }))).toEqual(byPolicy('pods', 'labelled'));
    }

    // Allowed: every write the agent makes, through its own actuators, as it makes them.
    const uid = created.metadata!.uid!;
    const pod = gated.metadata!.name!;
    const region = 'standalone';
    await act('ReplicaSet', { kind: 'scale', region, workload: 'web-amd64', from: 0, replicas: 0 });
    // A scale that records the rollout's group (core/rollout/group-record.ts), then one outside a group, which empties it.
    const record = { revision: 'R1', rolloutStart: '2026-11-30T12:00:00.000Z', group: 2, groupStart: '2026-11-30T12:01:00.000Z' };
    await act('ReplicaSet', { kind: 'scale', region, workload: 'web-amd64', from: 0, replicas: 1, record });
    const recorded = await admin.apps.readNamespacedReplicaSet({ namespace: ns, name: 'web-amd64' });
    expect([recorded.spec?.replicas, parseGroupRecord(recorded.metadata?.annotations?.[GROUP_RECORD_ANNOTATION])]).toEqual([1, record]);
    await act('ReplicaSet', { kind: 'scale', region, workload: 'web-amd64', from: 1, replicas: 2, record: null });
    const scaled = await admin.apps.readNamespacedReplicaSet({ namespace: ns, name: 'web-amd64' });
    expect([scaled.spec?.replicas, scaled.metadata?.annotations?.[GROUP_RECORD_ANNOTATION]]).toEqual([2, '']);
    // A keeper, as the agent makes, scales and deletes one, owned by a real ExtendedDeployment (the garbage collector
    // deletes one whose owner does not exist).
    const owner = (await admin.objects.create(ownerEd(ns))) as unknown as { metadata: { name: string; uid: string } };
    const keeper: RolloutAction = {
      kind: 'createKeeper',
      region: 'amd64',
      workload: 'web-amd64-r0',
      replicas: 0,
      revision: 'r0',
      template: { metadata: { labels: { ...edLabels, [REVISION_LABEL]: 'r0' } }, spec: { containers: [{ name: 'web', image: 'registry.example/web:0' }] } },
      owner: { name: owner.metadata.name, uid: owner.metadata.uid },
    };
    await act('ReplicaSet', keeper);
    await act('ReplicaSet', { kind: 'scale', region: 'amd64', workload: 'web-amd64-r0', from: 0, replicas: 0 });
    const made = await admin.apps.readNamespacedReplicaSet({ namespace: ns, name: 'web-amd64-r0' });
    expect(made.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ExtendedDeployment', name: 'web', uid: owner.metadata.uid, controller: true });
    await act('ReplicaSet', { kind: 'dropKeeper', region: 'amd64', workload: 'web-amd64-r0', uid: made.metadata!.uid! });
    await waitFor(
      'the keeper is deleted',
      async () => !(await admin.apps.listNamespacedReplicaSet({ namespace: ns })).items.some((rs) => rs.metadata?.name === 'web-amd64-r0'),
    );
    await act('Deployment', { kind: 'scale', region: 'arm64', workload: 'web-arm64', from: 0, replicas: 1 });
    await act('Deployment', { kind: 'setPaused', region: 'arm64', workload: 'web-arm64', paused: false });
    const deployment = await admin.apps.readNamespacedDeployment({ namespace: ns, name: 'web-arm64' });
    expect([deployment.spec?.replicas, deployment.spec?.paused === true]).toEqual([1, false]); // false is left out
    await act('StatefulSet', { kind: 'scale', region: 'zone-a', workload: 'web-zone-a', from: 0, replicas: 2 });
    await act('StatefulSet', { kind: 'setPartition', region: 'zone-a', workload: 'web-zone-a', from: 0, partition: 2 });
    const statefulSet = await admin.apps.readNamespacedStatefulSet({ namespace: ns, name: 'web-zone-a' });
    expect([statefulSet.spec?.replicas, statefulSet.spec?.updateStrategy]).toEqual([2, { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }]);

    await act('ReplicaSet', { kind: 'markOld', region, pod, uid, at: '2026-01-01T00:00:00Z', cost: -2147483648 });
    expect((await readPod(ns, pod)).metadata?.annotations).toMatchObject({
      [POD_DELETION_COST_ANNOTATION]: '-2147483648',
      [MARKED_AT_ANNOTATION]: '2026-01-01T00:00:00Z',
    });
    await act('ReplicaSet', { kind: 'unmark', region, pod, uid });
    await act('ReplicaSet', { kind: 'closeGate', region, pod, uid });
    const current = async (): Promise<V1Pod> => readPod(ns, pod);
    const swap = async (kind: 'swapBegin' | 'swapImages' | 'swapDone', phase: 'draining' | 'swapping' | 'done') => {
      const resourceVersion = (await current()).metadata!.resourceVersion!;
      const images = kind === 'swapImages' ? { app: 'registry.example/app:2' } : undefined;
      await act('ReplicaSet', {
        kind,
        region,
        pod,
        uid,
        resourceVersion,
        state: { revision: 'r2', phase, since: 0 },
        ...(images && { images, revision: 'r2' }),
      });
    };
    await swap('swapBegin', 'draining');
    await swap('swapImages', 'swapping');
    await swap('swapDone', 'done');
    await act('ReplicaSet', { kind: 'openGate', region, pod, uid });
    const swapped = await current();
    expect(swapped.metadata?.uid).toBe(uid);
    expect(swapped.spec?.containers[0]?.image).toBe('registry.example/app:2');
    expect(swapped.metadata?.labels?.[REVISION_LABEL]).toBe('r2');
    expect(JSON.parse(swapped.metadata?.annotations?.[SWAP_STATE_ANNOTATION] ?? '{}')).toMatchObject({ phase: 'done' });
    expect(swapped.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION]).toBeUndefined();
    expect(swapped.status?.conditions?.find((c) => c.type === IN_PLACE_READINESS_GATE)?.status).toBe('True');
    // The agent's writes were its identity's, not the admin's.
    const managers = (swapped.metadata?.managedFields ?? []).map((m) => m.manager);
    expect(managers).toContain(AGENT_FIELD_MANAGER);
    console.log(
      `[admission] ${subject}: refused kube-system image, unrelated pod/ReplicaSet/Deployment/StatefulSet, new pod, template, update type, labels, readiness; allowed scale (with a ReplicaSet's group record), pause, partition, mark, unmark, gate, swap`,
    );

    await act('ReplicaSet', { kind: 'deletePod', region, pod, uid });
    await waitFor('the labelled pod deleted (or evicted)', async () => {
      try {
        const p = await current();
        return p.metadata?.uid !== uid || p.metadata?.deletionTimestamp !== undefined;
      } catch (error) {
        return errorCode(error) === 404;
      }
    });
  } finally {
    await identity?.remove();
    try {
      await clients().core.deleteNamespacedPod({ namespace: 'kube-system', name: system, gracePeriodSeconds: 0 });
    } catch {
      // never created
    }
  }
});
