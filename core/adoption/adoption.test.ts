import { describe, expect, it } from 'vitest';
import { webEd } from '../rollout/test-support.js';
import {
  extendedDeployment,
  type AdoptionSource,
  type AdoptionStatus,
  type ExtendedDeployment,
  type ExtendedDeploymentStatus,
} from '../api/extended-deployment.js';
import type { PodObject, PodTemplate, WorkloadObject } from '../kube/objects.js';
import { ADOPTED_FROM_ANNOTATION, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import { templateRevision } from '../revision.js';
import { ADOPTION_BATCH, adoptedRevision, adoptionState, doneAdoptions, planAdoptions, type AdoptionObjects } from './adoption.js';
import type { AdoptionAction } from './actions.js';

/** ExtendedDeployment shop/web: region a (3 replicas) adopts `adopt` (Deployment web by default), region b adopts nothing. */
const ed = (adopt: AdoptionSource = { kind: 'Deployment', name: 'web' }): ExtendedDeployment =>
  webEd([
    { name: 'a', replicas: 3, adopt },
    { name: 'b', replicas: 1 },
  ]);

/** The status the agent last wrote, with `adoptions`. */
const written = (adoptions?: AdoptionStatus[]): ExtendedDeploymentStatus | undefined => (adoptions ? { adoptions } : undefined);

/** webEd's template. */
const appTemplate: PodTemplate = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
const regionLabels = { app: 'web', [NAME_LABEL]: 'web', [REGION_LABEL]: 'a' };
const regionTemplate: PodTemplate = {
  metadata: { labels: { ...regionLabels, [REVISION_LABEL]: templateRevision({ ...appTemplate, metadata: { labels: regionLabels } }) } },
  spec: appTemplate.spec!,
};

interface Counts {
  /** Region a's ReplicaSet web-a: spec.replicas, and whether it has observed it. */
  readonly r: number;
  readonly oursObserved?: boolean;
  /** The Deployment's spec.replicas, and its ReplicaSet's status.replicas. */
  readonly o: number;
  readonly oldCounted?: number;
  /** The old ReplicaSet's own spec.replicas, where the Deployment controller has not passed the Deployment's on yet. */
  readonly oldSpec?: number;
  /** Pods web-a controls, and pods the old ReplicaSet controls. */
  readonly p: number;
  readonly q: number;
  /** Pods of web-a that it made itself and are not Ready. */
  readonly unready?: number;
}

const rs = (
  name: string,
  uid: string,
  replicas: number,
  template: PodTemplate,
  extra: Partial<WorkloadObject['metadata']> = {},
  observed = true,
  counted = replicas,
): WorkloadObject => ({
  metadata: { name, uid, generation: 2, labels: template.metadata?.labels ?? {}, ...extra },
  spec: { replicas, template, selector: { matchLabels: template.metadata?.labels } } as WorkloadObject['spec'],
  status: { observedGeneration: observed ? 2 : 1, replicas: counted },
});
const podOf = (
  name: string,
  owner: string,
  uid: string,
  labels: Record<string, string>,
  ready = true,
  annotations: Record<string, string> = {},
): PodObject => ({
  metadata: {
    name,
    uid: `uid-${name}`,
    resourceVersion: `rv-${name}`,
    labels,
    annotations,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid, controller: true }],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

/** The namespace with Deployment web (its ReplicaSet web-5d8f) and region a's web-a at `counts`. */
function objects(c: Counts, oldTemplate: PodTemplate = appTemplate): AdoptionObjects {
  const deployment: WorkloadObject = {
    metadata: { name: 'web', uid: 'dep-uid', generation: 1 },
    spec: { replicas: c.o, template: oldTemplate, selector: { matchLabels: { app: 'web' } } } as WorkloadObject['spec'],
    status: { observedGeneration: 1 },
  };
  const hashed = { ...oldTemplate, metadata: { labels: { ...oldTemplate.metadata?.labels, 'pod-template-hash': '5d8f' } } };
  const oldRs = rs(
    'web-5d8f',
    'old-uid',
    c.oldSpec ?? c.o,
    hashed,
    { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'dep-uid', controller: true }] },
    true,
    c.oldCounted ?? c.q,
  );
  const ours = rs('web-a', 'ours-uid', c.r, regionTemplate, { labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'a' } }, c.oursObserved ?? true);
  const pods = [
    ...Array.from({ length: c.q }, (_, i) => podOf(`web-5d8f-${String.fromCharCode(122 - i)}`, 'web-5d8f', 'old-uid', hashed.metadata.labels)),
    ...Array.from({ length: c.p }, (_, i) =>
      podOf(
        `moved-${i}`,
        'web-a',
        'ours-uid',
        regionTemplate.metadata!.labels!,
        true,
        i < (c.unready ?? 0) ? {} : { [ADOPTED_FROM_ANNOTATION]: 'Deployment/web' },
      ),
    ).map((pod, i) => (i < (c.unready ?? 0) ? { ...pod, status: { phase: 'Pending', conditions: [] } } : pod)),
  ];
  return { deployments: [deployment], replicaSets: [oldRs, ours], inplaceSets: [], pods };
}

const moving: AdoptionStatus = { region: 'a', source: 'Deployment/web', phase: 'Moving', frozen: ['old-uid'], moved: 0, message: '' };

/** The plan's writes, short: `verify`, `raise 0->3`, `adopt <pod>`, `scaleSource 3->0`. */
function writes(actions: readonly AdoptionAction[]): string[] {
  return actions.map((a) => {
    switch (a.kind) {
      case 'verifyFreeze':
        return 'verify';
      case 'scale':
        return `raise ${a.from}->${a.replicas}`;
      case 'adoptPod':
        return `adopt ${a.pod}`;
      case 'scaleSource':
        return `scaleSource ${a.from}->${a.replicas}`;
    }
  });
}

describe('planAdoptions: one step at a time, re-derived from the counts', () => {
  const rows: readonly [string, Counts, string[]][] = [
    ['nothing moved yet: raise the region by a batch', { r: 0, o: 3, p: 0, q: 3 }, ['verify', 'raise 0->3']],
    ['raised and observed: move as many pods (by name)', { r: 3, o: 3, p: 0, q: 3 }, ['verify', 'adopt web-5d8f-x', 'adopt web-5d8f-y', 'adopt web-5d8f-z']],
    ['raised but not observed: wait (the ReplicaSet would delete the pod as excess)', { r: 3, oursObserved: false, o: 3, p: 0, q: 3 }, []],
    ['moved, the old ReplicaSet still counts them: wait (it would delete an original)', { r: 3, o: 3, p: 3, q: 0, oldCounted: 3 }, []],
    ['moved and counted out: scale the Deployment down', { r: 3, o: 3, p: 3, q: 0, oldCounted: 0 }, ['verify', 'scaleSource 3->0']],
    ['half way: the next batch', { r: 2, o: 3, p: 2, q: 1, oldCounted: 1 }, ['verify', 'scaleSource 3->1']],
    ['Git made a pod before the freeze, not Ready: it leaves first', { r: 1, o: 3, p: 1, q: 3, unready: 1 }, ['verify', 'raise 1->0']],
    ['a Ready pod the region made is kept: capacity', { r: 1, o: 3, p: 1, q: 3 }, ['verify', 'raise 1->4']],
    ['the ReplicaSet has more pods than its count: wait', { r: 1, o: 3, p: 2, q: 3 }, []],
  ];
  it.each(rows)('%s', (_, counts, expected) => {
    const plan = planAdoptions(ed(), written([moving]), objects(counts));
    expect(writes(plan.actions)).toEqual(expected);
    expect(plan.open).toBe(true);
    expect(plan.entries).toEqual([
      { region: 'a', source: 'Deployment/web', phase: 'Moving', frozen: ['old-uid'], moved: counts.p, message: `${counts.p} pods moved, ${counts.q} to go` },
    ]);
  });

  it(`raises by at most ${ADOPTION_BATCH} pods per step`, () => {
    expect(writes(planAdoptions(ed(), written([moving]), objects({ r: 0, o: 25, p: 0, q: 25 })).actions)).toEqual(['verify', `raise 0->${ADOPTION_BATCH}`]);
  });

  it('writes the freeze into the status before any step, and moves nothing in that look', () => {
    const plan = planAdoptions(ed(), written(), objects({ r: 0, o: 3, p: 0, q: 3 }));
    expect(plan.actions).toEqual([]);
    expect(plan.entries[0]).toMatchObject({ phase: 'Moving', frozen: ['old-uid'] });
    expect(plan.events).toEqual([{ type: 'Normal', reason: 'AdoptionStarted', message: 'region a adopting the pods of Deployment/web' }]);
  });

  it('is done when the old workload is at 0 with no pod and its ReplicaSet counts none: the freeze is lifted', () => {
    const plan = planAdoptions(ed(), written([moving]), objects({ r: 3, o: 0, p: 3, q: 0, oldCounted: 0 }));
    expect(plan.open).toBe(false);
    expect(plan.actions).toEqual([]);
    expect(plan.entries).toEqual([{ region: 'a', source: 'Deployment/web', phase: 'Adopted', moved: 3, message: '3 pods taken over from Deployment/web' }]);
    expect(plan.events.map((e) => e.reason)).toEqual(['Adopted']);
    expect(planAdoptions(ed(), written([moving]), objects({ r: 3, o: 0, p: 3, q: 0, oldCounted: 1 })).open).toBe(true);
  });

  it('moves a pod with one patch: the region owns it, labels as the region (no pod-template-hash), and where it came from', () => {
    const [, adopt] = planAdoptions(ed(), written([moving]), objects({ r: 1, o: 1, p: 0, q: 1 })).actions;
    expect(adopt).toEqual({
      kind: 'adoptPod',
      region: 'a',
      pod: 'web-5d8f-z',
      uid: 'uid-web-5d8f-z',
      resourceVersion: 'rv-web-5d8f-z',
      owner: { name: 'web-a', uid: 'ours-uid' },
      labels: regionTemplate.metadata!.labels,
      annotations: { [ADOPTED_FROM_ANNOTATION]: 'Deployment/web' },
    });
  });

  it("labels a pod whose template differs from the region's with a revision of its own, so the rollout replaces it", () => {
    const other: PodTemplate = { ...appTemplate, spec: { containers: [{ name: 'c', image: 'i:old' }] } };
    const [, adopt] = planAdoptions(ed(), written([moving]), objects({ r: 1, o: 1, p: 0, q: 1 }, other)).actions;
    const revision = adopt?.kind === 'adoptPod' ? adopt.labels[REVISION_LABEL] : undefined;
    expect(revision).toBe(adoptedRevision(other, regionTemplate));
    expect(revision).not.toBe(regionTemplate.metadata?.labels?.[REVISION_LABEL]);
    expect(adoptedRevision(appTemplate, regionTemplate)).toBe(regionTemplate.metadata?.labels?.[REVISION_LABEL]);
  });
});

describe('planAdoptions: what it waits for', () => {
  const waiting = (plan: ReturnType<typeof planAdoptions>) => ({
    phase: plan.entries[0]?.phase,
    message: plan.entries[0]?.message,
    actions: plan.actions.length,
  });

  it("waits for Git to create the region's ReplicaSet", () => {
    const o = objects({ r: 0, o: 3, p: 0, q: 3 });
    const plan = planAdoptions(ed(), written(), { ...o, replicaSets: o.replicaSets.filter((x) => x.metadata?.name !== 'web-a') });
    expect(waiting(plan)).toEqual({ phase: 'Waiting', message: 'waiting for the sync to create ReplicaSet web-a', actions: 0 });
  });

  it('waits while the Deployment rolls out (two ReplicaSets run pods), unfrozen', () => {
    const o = objects({ r: 0, o: 3, p: 0, q: 3 });
    const second = { ...o.replicaSets[0]!, metadata: { ...o.replicaSets[0]!.metadata, name: 'web-77aa', uid: 'new-uid' } };
    const plan = planAdoptions(ed(), written([moving]), { ...o, replicaSets: [...o.replicaSets, second] });
    expect(waiting(plan)).toEqual({
      phase: 'Waiting',
      message: 'Deployment web is rolling out (ReplicaSets web-5d8f, web-77aa run pods): the adoption goes on once it is done',
      actions: 0,
    });
    expect(plan.entries[0]?.frozen).toBeUndefined();
  });

  it("refuses to go on where the Deployment's selector matches the region's ReplicaSet (it would take it over)", () => {
    const o = objects({ r: 0, o: 3, p: 0, q: 3 });
    const ours = o.replicaSets[1]!;
    const clashing = { ...ours, metadata: { ...ours.metadata, labels: { ...ours.metadata?.labels, app: 'web' } } };
    expect(waiting(planAdoptions(ed(), written([moving]), { ...o, replicaSets: [o.replicaSets[0]!, clashing] })).message).toBe(
      'Deployment web selects the labels of ReplicaSet web-a and would take it over: give the ReplicaSet labels its selector does not match',
    );
  });

  it('adopts a ReplicaSet only where nothing controls it (a Deployment would set its count back)', () => {
    const plan = planAdoptions(ed({ kind: 'ReplicaSet', name: 'web-5d8f' }), written([]), objects({ r: 0, o: 3, p: 0, q: 3 }));
    expect(waiting(plan).message).toBe('ReplicaSet web-5d8f is controlled by Deployment web, which sets its replicas: adopt the Deployment instead');
  });

  it("keeps the freeze while the Deployment's ReplicaSet still wants pods it no longer has (unfrozen, it would make them)", () => {
    const lagging = planAdoptions(ed(), written([moving]), objects({ r: 3, o: 0, oldSpec: 3, p: 3, q: 0, oldCounted: 0 }));
    expect(lagging.open).toBe(true);
    expect(lagging.entries[0]).toMatchObject({ phase: 'Moving', frozen: ['old-uid'] });
    expect(lagging.actions).toEqual([]);
    // The same while a Git change makes the Deployment roll out in the middle of a step: it waits, frozen.
    const o = objects({ r: 3, o: 3, p: 2, q: 1, oldCounted: 1 });
    const second = { ...o.replicaSets[0]!, metadata: { ...o.replicaSets[0]!.metadata, name: 'web-77aa', uid: 'new-uid' } };
    const rolling = planAdoptions(ed(), written([moving]), { ...o, replicaSets: [...o.replicaSets, second] });
    expect(rolling.entries[0]).toMatchObject({ phase: 'Moving', frozen: ['old-uid'] });
    expect(rolling.entries[0]?.message).toContain('the freeze holds until ReplicaSet web-5d8f runs as many pods as its count');
  });

  it('finds nothing to adopt where the source is gone', () => {
    const plan = planAdoptions(ed({ kind: 'Deployment', name: 'api' }), written([moving]), objects({ r: 2, o: 0, p: 2, q: 0 }));
    expect(plan.entries[0]).toMatchObject({ phase: 'Adopted', moved: 2, message: 'Deployment/api not found: nothing left to adopt' });
  });
});

describe('adoptionState', () => {
  it('reads from the status alone whether anything is left to adopt', () => {
    const done: AdoptionStatus = { region: 'a', source: 'Deployment/web', phase: 'Adopted', moved: 3 };
    expect(adoptionState(ed(), written([done]))).toBe('done');
    expect(adoptionState(ed(), written([moving]))).toBe('open');
    expect(adoptionState(ed(), written([{ ...done, source: 'Deployment/api' }]))).toBe('open');
    const plain = extendedDeployment.parse({ ...ed(), spec: { ...ed().spec, regions: [{ name: 'a' }] } });
    expect(adoptionState(plain, written([done]))).toBe('none');
    expect(doneAdoptions(ed(), written([done, { ...done, region: 'gone' }]))).toEqual([done]);
  });
});

describe("planAdoptions: the upstream operator's InplaceSet, which nothing controls once that operator is uninstalled", () => {
  const ips = (replicas: number, statusReplicas: number): WorkloadObject => ({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'InplaceSet',
    metadata: { name: 'web-a-ips', uid: 'ips-uid', generation: 3 },
    spec: { replicas, template: appTemplate },
    // Its status is what the operator last wrote, and stays so.
    status: { observedGeneration: 1, replicas: statusReplicas },
  });
  const ipsPod = (name: string): PodObject => {
    const pod = podOf(name, 'web-a-ips', 'ips-uid', { app: 'web' });
    const ownerReferences = [{ apiVersion: 'extendeddeployment.io/v1beta1', kind: 'InplaceSet', name: 'web-a-ips', uid: 'ips-uid', controller: true }];
    return { ...pod, metadata: { ...pod.metadata, ownerReferences } };
  };
  const frozen: AdoptionStatus = { region: 'a', source: 'InplaceSet/web-a-ips', phase: 'Moving', frozen: ['ips-uid'], moved: 0, message: '' };
  const look = (replicas: number, oldPods: number, r: number, p: number) => {
    const o = objects({ r, o: 0, p, q: 0 });
    return planAdoptions(ed({ kind: 'InplaceSet', name: 'web-a-ips' }), written([{ ...frozen, moved: p }]), {
      ...o,
      inplaceSets: [ips(replicas, 3)],
      pods: [...o.pods, ...Array.from({ length: oldPods }, (_, i) => ipsPod(`ips-${i}`))],
    });
  };

  it('moves its pods and scales it down without waiting for a controller to observe anything', () => {
    expect(writes(look(3, 3, 3, 0).actions)).toEqual(['verify', 'adopt ips-0', 'adopt ips-1', 'adopt ips-2']);
    expect(writes(look(3, 0, 3, 3).actions)).toEqual(['verify', 'scaleSource 3->0']);
    const [verify] = look(3, 0, 3, 3).actions;
    expect(verify).toEqual({
      kind: 'verifyFreeze',
      region: 'a',
      owner: { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'InplaceSet', name: 'web-a-ips', uid: 'ips-uid' },
    });
  });

  it('is done at 0 replicas and no pods, whatever its stale status says', () => {
    expect(look(0, 0, 3, 3).entries[0]).toMatchObject({ phase: 'Adopted', moved: 3 });
    expect(look(1, 0, 3, 3).open).toBe(true);
  });
});
