// ExtendedDeployments that bypassed validation. The CRD is swapped for an "older" one that has no schema at all
// (`x-kubernetes-preserve-unknown-fields` at the root, status subresource only: what a cluster that skipped a CRD
// upgrade serves), so the API server stores what the generated CRD would reject: wrong types, an unparseable
// percentage, no regions, a spec that is a string, schema and cross-field problems together; plus a garbled revisions
// annotation, which no schema checks. The agent (in-process, rendered RBAC) must mark each one Valid=False with every
// field path, emit an InvalidSpec Warning Event with them, and meanwhile roll a valid ExtendedDeployment beside them
// through two revisions with no invariant broken. Fixing an object clears its condition. The generated CRD is put
// back at the end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { VALID_CONDITION } from '../../core/api/conditions.js';
import { IN_PLACE_READINESS_GATE, NAME_LABEL, REGION_LABEL, REVISIONS_ANNOTATION } from '../../core/labels.js';
import { repoRoot } from '../cluster/build.js';
import { clients, errorCode, podReady, rawRequest, serverSideApply, test, waitFor } from './helpers.js';
import {
  agentMetrics,
  counterSum,
  counterValue,
  ED_NAME,
  edEvents,
  fill,
  GROUP,
  podCounts,
  readStatus,
  VERSION,
  withRolloutEnv,
  type EdEvent,
} from './rollout-kit.js';

// The spec is broken on purpose below, with values of the wrong type at any depth: no type short of any admits that.
type Ed = {
  metadata: { name: string; namespace?: string; generation?: number; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  spec: any;
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[] };
};

const generatedCrd = parse(readFileSync(join(repoRoot, 'crds', `${GROUP}_extendeddeployments.yaml`), 'utf8')) as KubernetesObject & {
  spec: { versions: Record<string, unknown>[] };
};

/** The generated CRD as an older release might have served it: same names and versions, no schema, no extra columns. */
function permissiveCrd(): KubernetesObject {
  const crd = structuredClone(generatedCrd);
  crd.spec.versions = crd.spec.versions.map((v) => ({
    name: v['name'],
    served: true,
    storage: v['storage'],
    subresources: { status: {} },
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  }));
  return crd;
}

const collection = (ns: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`;

/** The ways to break an ExtendedDeployment, and the field paths the agent must name for each. */
const MALFORMED: { name: string; mutate: (ed: Ed) => void; paths: string[] }[] = [
  {
    name: 'wrong-types',
    mutate: (ed) => {
      ed.spec.replicas = 'three';
      ed.spec.strategy.minReadySeconds = 'soon';
    },
    paths: ['spec.replicas', 'spec.strategy.minReadySeconds'],
  },
  { name: 'bad-percent', mutate: (ed) => ((ed.spec.replicas = 4), (ed.spec.regions[0].replicas = 'lots%')), paths: ['spec.regions[0].replicas'] },
  { name: 'no-regions', mutate: (ed) => delete ed.spec.regions, paths: ['spec.regions'] },
  { name: 'spec-string', mutate: (ed) => (ed.spec = 'replicas: 3'), paths: ['spec'] },
  {
    name: 'schema-and-rules',
    mutate: (ed) => ((ed.spec.historyLimit = 'many'), (ed.spec.regions[1].name = ed.spec.regions[0].name)),
    paths: ['spec.historyLimit', 'spec.regions[1].name'],
  },
  {
    name: 'bad-revisions',
    mutate: (ed) => (ed.metadata.annotations![REVISIONS_ANNOTATION] = '{"a": '),
    paths: [`metadata.annotations["${REVISIONS_ANNOTATION}"]`],
  },
];

test('ExtendedDeployments that bypassed validation are marked invalid with field paths while a valid one rolls out', { timeout: 600_000 }, async ({ ns }) => {
  await withRolloutEnv(ns, 'invalid-spec', async (env) => {
    const base = env.render({ image: 'registry.example/web:1', replicas: [2, 1, 1] }).manifest as unknown as Ed;
    const broken = MALFORMED.map((c) => {
      const ed = structuredClone(base);
      ed.metadata = { name: c.name, namespace: ns, annotations: { ...base.metadata.annotations } };
      c.mutate(ed);
      return { ...c, ed };
    });

    await serverSideApply(permissiveCrd());
    try {
      // The API server validates with the new CRD once its handler is rebuilt: until then the old schema rejects (422).
      for (const { ed } of broken) {
        await waitFor(`${ed.metadata.name} created under the permissive CRD`, async () => {
          try {
            await rawRequest('POST', collection(ns), ed);
            return true;
          } catch (e) {
            if (errorCode(e) === 422) return false;
            throw e;
          }
        });
      }

      // The valid ExtendedDeployment beside them: filled at v1, then rolled to v2.
      await fill(env, { image: 'registry.example/web:1', replicas: [2, 1, 1] });
      await fill(env, { image: 'registry.example/web:2', replicas: [2, 1, 1] });

      const read = (name: string) => rawRequest('GET', `${collection(ns)}/${name}`) as Promise<Ed>;
      for (const c of broken) {
        const ed = await waitFor(
          `${c.name}: Valid=False naming ${c.paths.join(', ')}`,
          async () => {
            const got = await read(c.name);
            const valid = got.status?.conditions?.find((x) => x.type === VALID_CONDITION);
            return valid?.status === 'False' && c.paths.every((p) => valid.message?.includes(`${p}: `)) ? got : undefined;
          },
          { describe: () => read(c.name) },
        );
        const valid = ed.status!.conditions!.find((x) => x.type === VALID_CONDITION)!;
        expect(valid.reason).toBe('InvalidSpec');
        expect(valid.observedGeneration).toBe(ed.metadata.generation);
        console.log(`[invalid-spec] ${c.name}: ${valid.message}`);

        const isWarning = (e: EdEvent) => e.type === 'Warning' && e.reason === 'InvalidSpec';
        const events = await edEvents(ns, { name: c.name, until: (all) => all.some(isWarning) });
        const warnings = events.filter(isWarning);
        expect(warnings, JSON.stringify(events)).toHaveLength(1);
        for (const p of c.paths) expect(warnings[0]?.message).toContain(`${p}: `);
      }

      // A fixed object is valid again: the condition goes away with the next reconcile.
      const fixed = structuredClone(base);
      fixed.metadata = { name: 'bad-revisions', namespace: ns, annotations: base.metadata.annotations! };
      await serverSideApply(fixed as unknown as KubernetesObject);
      await waitFor('bad-revisions: Valid condition cleared', async () => {
        const got = await read('bad-revisions');
        return !got.status?.conditions?.some((x) => x.type === VALID_CONDITION);
      });
      expect(env.agent.ready()).toBe(true);
    } finally {
      await serverSideApply(generatedCrd);
    }
  });
});

// A DeployRegion deleted while an ExtendedDeployment rendered against it runs (by hand, or a GitOps prune and
// re-create). With fault moves on, a region without its DeployRegion used to count as Failed at once, and its replicas
// moved away from pods that ran fine. Now the ExtendedDeployment is Valid=False naming the region, with an InvalidSpec
// Warning Event; nothing is moved or scaled, and its pods stay. In-place updates are on, so every pod carries the
// InPlaceUpdateReady readiness gate: a pod created while the object is invalid (its predecessor deleted) must still
// become Ready (the agent's fail-safe gate). Re-created, the DeployRegion makes the object valid and Healthy again.
test(
  'a deleted DeployRegion makes the ExtendedDeployment invalid: nothing moves, a new gated pod still becomes Ready; re-created, Healthy again',
  { timeout: 600_000 },
  async ({ ns }) => {
    await withRolloutEnv(ns, 'region-deleted', async (env) => {
      const [a, b, c] = env.regions.map((r) => r.metadata!.name!) as [string, string, string];
      const strategy = { faultMove: { enable: true, tolerationSeconds: 5 }, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 } };
      const v1 = await fill(env, { image: 'registry.example/web:1', replicas: [2, 2, 2], strategy });
      const everywhere = v1.regions.map((r) => ({ name: r.name, updated: 2, old: 0 }));
      const scales = async () => counterValue(await agentMetrics(env.agent), 'extendeddeployment_agent_actions_total', 'kind', 'scale');
      const scalesBefore = await scales();
      const replicaSets = async () =>
        Promise.all(
          v1.regions.map(async (r) => (await clients().apps.readNamespacedReplicaSet({ name: `${ED_NAME}-${r.name}`, namespace: ns })).spec?.replicas),
        );

      await clients().objects.delete(env.regions[2]!);
      const valid = await waitFor(
        `Valid=False naming DeployRegion ${c}`,
        async () => {
          const condition = (await readStatus(ns)).conditions?.find((x) => x.type === VALID_CONDITION);
          return condition?.status === 'False' && condition.message?.includes(`DeployRegion "${c}" not found`) ? condition : undefined;
        },
        { describe: () => readStatus(ns) },
      );
      expect(valid.reason).toBe('InvalidSpec');
      const isWarning = (e: EdEvent) => e.type === 'Warning' && e.reason === 'InvalidSpec' && e.message.includes(`DeployRegion "${c}" not found`);
      expect((await edEvents(ns, { until: (events) => events.some(isWarning) })).filter(isWarning)).toHaveLength(1);

      // A new pod with the readiness gate appears while the object is invalid: its ReplicaSet replaces a deleted pod.
      const regionPods = async (region: string) =>
        (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME},${REGION_LABEL}=${region}` })).items.filter(
          (p) => !p.metadata?.deletionTimestamp,
        );
      const before = await regionPods(a);
      const victim = before[0]!.metadata!.name!;
      await clients().core.deleteNamespacedPod({ name: victim, namespace: ns, gracePeriodSeconds: 0 });
      const replacement = await waitFor(
        `the pod replacing ${victim} Ready, its gate opened`,
        async () => {
          const fresh = (await regionPods(a)).find((p) => !before.some((o) => o.metadata?.uid === p.metadata?.uid));
          const gate = fresh?.status?.conditions?.find((x) => x.type === IN_PLACE_READINESS_GATE);
          return fresh && gate?.status === 'True' && podReady(fresh) ? fresh : undefined;
        },
        { timeoutMs: 120_000, describe: async () => (await regionPods(a)).map((p) => ({ name: p.metadata?.name, conditions: p.status?.conditions })) },
      );
      expect(replacement.spec?.readinessGates?.map((g) => g.conditionType)).toContain(IN_PLACE_READINESS_GATE);
      // The object is still invalid: the gate was opened by the fail-safe, not by a plan.
      expect((await readStatus(ns)).conditions?.find((x) => x.type === VALID_CONDITION)?.status).toBe('False');

      // The agent reconciled it at least twice while invalid (the deletion, the new pod): nothing moved or scaled.
      const status = await readStatus(ns);
      expect(status.moves).toBeUndefined();
      expect(await replicaSets()).toEqual([2, 2, 2]);
      expect(await podCounts(ns, v1)).toEqual(everywhere);
      expect(await scales()).toBe(scalesBefore);
      expect(counterSum(await agentMetrics(env.agent), 'extendeddeployment_agent_moved_replicas_total')).toBe(0);

      await serverSideApply(env.regions[2]!);
      await waitFor(
        'valid again and Healthy',
        async () => {
          const s = await readStatus(ns);
          return !s.conditions?.some((x) => x.type === VALID_CONDITION) && s.phase === 'Healthy' && s.revision === v1.rolloutRevision;
        },
        { timeoutMs: 120_000, describe: () => readStatus(ns) },
      );
      expect((await readStatus(ns)).moves).toBeUndefined();
      expect(await replicaSets()).toEqual([2, 2, 2]);
      expect(await podCounts(ns, v1)).toEqual(everywhere);
      expect(counterSum(await agentMetrics(env.agent), 'extendeddeployment_agent_moved_replicas_total')).toBe(0);
      console.log(`[invalid-spec] region ${c} deleted under ${ED_NAME} (regions ${a}, ${b}, ${c}): ${valid.message}`);
    });
  },
);
