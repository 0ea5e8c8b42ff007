// fast-check arbitraries for the fuzz suites (fuzz-*.test.ts): sets of DeployRegions and ExtendedDeployments that are
// valid by construction (the schema in core/api and the cross-field rules of core/validate.ts and distribution.ts),
// and mutations that make an ExtendedDeployment invalid at a known field path.
//
// Valid by construction means: region names unique, their node sets disjoint (every DeployRegion carries the zone key
// with its own value), template labels matching the selector and no other ExtendedDeployment's selector, container
// names unique, overrides naming existing containers, RFC 6902 patches whose paths exist, replica counts that
// distribute (see `placements`), and the few strategy combinations the rules forbid left out.
import fc from 'fast-check';
import { API_VERSION } from '../../core/api/identity.js';

/** A generated object as YAML or JSON would hold it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A generated Kubernetes object. */
export type JsonObject = { [key: string]: Json };

/** The node label every generated DeployRegion sets to a value of its own, so no two regions share a node. */
export const ZONE_KEY = 'topology.kubernetes.io/zone';
/** The selector label of generated templates; overrides and patches never touch it. */
export const APP_KEY = 'app';

const dnsLabel = fc.stringMatching(/^[a-z]([-a-z0-9]{0,8}[a-z0-9])?$/);
const labelValue = fc.stringMatching(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?$/);
/** Label keys under a prefix of their own, so that generated labels never collide with the selector or zone key. */
const prefixedKey = (prefix: string) => dnsLabel.map((name) => `${prefix}/${name}`);
const percent = (min: number, max: number) => fc.integer({ min, max }).map((n) => `${n}%`);
const intOrPercent = fc.oneof(fc.nat(10), percent(0, 100));
/** Any text, YAML-hostile characters included: values end up in rendered YAML. */
const text = fc.string({ maxLength: 12 });

const toleration = fc.record(
  {
    key: prefixedKey('taint.example'),
    operator: fc.constantFrom('Exists', 'Equal'),
    value: labelValue,
    effect: fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
    tolerationSeconds: fc.nat(3600),
  },
  { requiredKeys: [] },
);
const tolerations = fc.array(toleration, { maxLength: 2 });

const image = fc.tuple(dnsLabel, fc.nat(20), fc.nat(20)).map(([name, major, minor]) => `registry.example/${name}:${major}.${minor}`);
const envName = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,6}$/);
const quantity = fc.oneof(fc.constantFrom('100m', '250m', '1', '64Mi', '1Gi'), fc.integer({ min: 1, max: 8 }));
const resources = fc.record(
  {
    requests: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity, { maxKeys: 2 }),
    limits: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity, { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

function container(name: string): fc.Arbitrary<JsonObject> {
  return fc.record(
    {
      name: fc.constant(name),
      image,
      imagePullPolicy: fc.constantFrom('IfNotPresent', 'Always'),
      command: fc.array(text, { maxLength: 3 }),
      env: fc.uniqueArray(fc.record({ name: envName, value: text }), { maxLength: 3, selector: (e) => e.name }),
      resources,
    },
    { requiredKeys: ['name', 'image'] },
  );
}

/** A DeployRegion named `name`, the `index`th of its set (its zone value). */
function deployRegion(name: string, index: number): fc.Arbitrary<JsonObject> {
  return fc
    .record({ extra: fc.dictionary(prefixedKey('node.example'), labelValue, { maxKeys: 2 }), tolerations }, { requiredKeys: ['extra'] })
    .map(({ extra, tolerations: t }) => ({
      apiVersion: API_VERSION,
      kind: 'DeployRegion',
      metadata: { name },
      spec: { matchLabels: { [ZONE_KEY]: `zone-${index}`, ...extra }, ...(t && { tolerations: t }) },
    }));
}

/** Typed overrides for one region of a template with these container names. */
function overrides(containers: readonly string[]): fc.Arbitrary<JsonObject> {
  const some = <V extends Json>(value: fc.Arbitrary<V>) =>
    fc
      .subarray([...containers], { maxLength: Math.min(2, containers.length) })
      .chain((names) => fc.tuple(...names.map(() => value)).map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]!]))));
  return fc.record(
    {
      images: some(image),
      env: some(fc.dictionary(envName, text, { maxKeys: 2 })),
      resources: some(resources),
      labels: fc.dictionary(prefixedKey('override.example'), labelValue, { maxKeys: 2 }),
      annotations: fc.dictionary(prefixedKey('note.example'), text, { maxKeys: 2 }),
      nodeSelector: fc.dictionary(prefixedKey('disk.example'), labelValue, { maxKeys: 1 }),
      tolerations,
    },
    { requiredKeys: [] },
  );
}

/** RFC 6902 operations that apply to every generated template. */
const patchOperation = fc.oneof(
  image.map((value) => ({ op: 'replace', path: '/spec/containers/0/image', value })),
  fc.tuple(dnsLabel, labelValue).map(([key, value]) => ({ op: 'add', path: `/metadata/labels/patched-${key}`, value })),
  dnsLabel.map((value) => ({ op: 'add', path: '/spec/priorityClassName', value })),
  fc.nat(120).map((value) => ({ op: 'add', path: '/spec/terminationGracePeriodSeconds', value })),
);

/**
 * Region entries with replica counts that distribute: either integers only (spec.replicas omitted, or their sum), or
 * spec.replicas with percentages (at most 100% together), integers within what the percentages leave, and at least
 * one region without a count that takes the rest. minReplicas/maxReplicas bound counts without contradicting them.
 */
function placements(names: readonly string[]): fc.Arbitrary<{ replicas?: number; regions: JsonObject[] }> {
  const n = names.length;
  const integers = fc
    .record({
      counts: fc.array(fc.nat(6), { minLength: n, maxLength: n }),
      bounds: fc.array(fc.record({ below: fc.option(fc.nat(3)), above: fc.option(fc.nat(3)) }), { minLength: n, maxLength: n }),
      total: fc.boolean(),
    })
    .map(({ counts, bounds, total }) => ({
      ...(total && { replicas: counts.reduce((a, b) => a + b, 0) }),
      regions: names.map((name, i) => {
        const count = counts[i]!;
        const { below, above } = bounds[i]!;
        return {
          name,
          replicas: count,
          ...(below !== null && { minReplicas: Math.max(0, count - below) }),
          ...(above !== null && { maxReplicas: count + above }),
        };
      }),
    }));
  const shares = fc
    .record({
      total: fc.nat(40),
      kinds: fc.array(fc.constantFrom('int', 'percent', 'unset'), { minLength: n, maxLength: n }),
      unset: fc.nat(n - 1),
      values: fc.array(fc.nat(100), { minLength: n, maxLength: n }),
      openBounds: fc.boolean(),
    })
    .map(({ total, kinds, unset, values, openBounds }) => {
      kinds[unset] = 'unset';
      const raw = values.map((v, i) => (kinds[i] === 'percent' ? v : 0));
      const rawSum = raw.reduce((a, b) => a + b, 0);
      const percents = raw.map((p) => (rawSum > 100 ? Math.floor((p * 100) / rawSum) : p));
      let left = total - Math.floor((total * percents.reduce((a, b) => a + b, 0)) / 100);
      return {
        replicas: total,
        regions: names.map((name, i): JsonObject => {
          if (kinds[i] === 'percent') return { name, replicas: `${percents[i]}%` };
          if (kinds[i] === 'int') {
            const count = Math.min(values[i]! % 7, left);
            left -= count;
            return { name, replicas: count };
          }
          return openBounds ? { name, minReplicas: 0, maxReplicas: total } : { name };
        }),
      };
    });
  return fc.oneof(integers, shares);
}

const strategy = fc.record(
  {
    batchSize: fc.oneof(fc.integer({ min: 1, max: 5 }), percent(1, 100)),
    minReadySeconds: fc.nat(30),
    needWaitingForConfirm: fc.boolean(),
    needFirstConfirm: fc.boolean(),
    syncWaitTimeout: fc.nat(600),
    rolloutStrategy: fc.constantFrom('Beta', 'Group'),
    pause: fc.boolean(),
    regionOrder: fc.constantFrom('Parallel', 'Sequential'),
    upgradeMode: fc.constantFrom('scaleOutPriority', 'scaleInPriority', 'scaleSimultaneously'),
    approval: fc.record({ revision: fc.stringMatching(/^[0-9a-f]{10}$/), throughGroup: fc.nat(5) }),
    autoReschedule: fc.record({ enable: fc.boolean(), timeoutSeconds: fc.nat(600), coolDownSeconds: fc.nat(600) }, { requiredKeys: [] }),
    faultMove: fc.record(
      {
        enable: fc.boolean(),
        failureThreshold: fc.oneof(fc.integer({ min: 1, max: 5 }), percent(1, 100)),
        tolerationSeconds: fc.nat(300),
        maxReplicasPerMinute: intOrPercent,
      },
      { requiredKeys: [] },
    ),
    moveBack: fc.record({ enable: fc.boolean(), stabilizationSeconds: fc.nat(600) }, { requiredKeys: [] }),
    updateStrategy: fc.record(
      {
        type: fc.constantFrom('ReCreate', 'RollingUpdate', 'DeleteAllFirst', 'InPlaceIfPossible'),
        gracePeriodSeconds: fc.nat(30),
        // Both budgets 0 is the one forbidden pair: maxSurge is at least 1 here.
        rollingUpdate: fc.record({ maxSurge: fc.oneof(fc.integer({ min: 1, max: 5 }), percent(1, 100)), maxUnavailable: intOrPercent }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

/** A required node affinity on a label no DeployRegion uses, so region placement ANDs into it. */
const DISK_AFFINITY: JsonObject = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk.example/type', operator: 'In', values: ['ssd', 'nvme'] }] }],
    },
  },
};

/** One ExtendedDeployment named `name` over some of `regionNames` (in any order). */
function extendedDeployment(name: string, namespace: string | null, regionNames: readonly string[]): fc.Arbitrary<JsonObject> {
  return fc
    .record({
      // Ends with `.<name>`: ExtendedDeployments of one namespace must not select each other's pods.
      app: labelValue.filter((v) => v !== '').map((v) => `${v}.${name}`),
      labels: fc.dictionary(prefixedKey('team.example'), labelValue, { maxKeys: 2 }),
      containerNames: fc.uniqueArray(dnsLabel, { minLength: 1, maxLength: 4 }),
      initCount: fc.nat(2),
      regions: fc.shuffledSubarray([...regionNames], { minLength: 1 }),
      selectorStyle: fc.constantFrom('labels', 'expressions', 'both'),
    })
    .chain(({ app, labels, containerNames, initCount, regions, selectorStyle }) => {
      const init = containerNames.slice(1, 1 + initCount);
      const main = containerNames.filter((c) => !init.includes(c));
      // `_` is in no name, so `<app>_canary` is no other ExtendedDeployment's app.
      const expressions = [{ key: APP_KEY, operator: 'In', values: [app, `${app}_canary`] }];
      const selector: JsonObject =
        selectorStyle === 'labels'
          ? { matchLabels: { [APP_KEY]: app } }
          : selectorStyle === 'expressions'
            ? { matchExpressions: expressions }
            : { matchLabels: { [APP_KEY]: app }, matchExpressions: expressions };
      const podSpec = fc.record(
        {
          containers: fc.tuple(...main.map(container)),
          initContainers: fc.tuple(...init.map(container)),
          restartPolicy: fc.constant('Always'),
          nodeSelector: fc.dictionary(prefixedKey('disk.example'), labelValue, { maxKeys: 1 }),
          tolerations,
          affinity: fc.constant(DISK_AFFINITY),
          terminationGracePeriodSeconds: fc.nat(60),
          readinessGates: fc.constant<Json>([{ conditionType: 'example.com/ready' }]),
        },
        // Overrides may name any container: init containers are always in the template.
        { requiredKeys: init.length > 0 ? ['containers', 'initContainers'] : ['containers'] },
      );
      const patchTargets = fc.subarray(regions, { maxLength: Math.min(2, regions.length) });
      return fc
        .record(
          {
            placed: placements(regions),
            podSpec,
            annotations: fc.dictionary(prefixedKey('note.example'), text, { maxKeys: 2 }),
            overrides: fc.array(fc.option(overrides(containerNames)), { minLength: regions.length, maxLength: regions.length }),
            patched: patchTargets.chain((targets) =>
              fc.tuple(...targets.map((t) => fc.array(patchOperation, { minLength: 1, maxLength: 3 }).map((ops) => ({ name: t, overriders: ops })))),
            ),
            historyLimit: fc.option(fc.nat(10)),
            subsetType: fc.option(fc.constantFrom('ReplicaSet', 'Deployment', 'InplaceSet', 'StatefulSet')),
            strategy: fc.option(strategy),
          },
          { requiredKeys: ['placed', 'podSpec', 'overrides', 'patched'] },
        )
        .map((g): JsonObject => {
          const strat = g.strategy ? structuredClone(g.strategy) : undefined;
          // In-place updates need ReplicaSets: compat mode gets plain replacement.
          if (g.subsetType === 'Deployment' && strat?.updateStrategy?.type === 'InPlaceIfPossible') strat.updateStrategy.type = 'RollingUpdate';
          // StatefulSet regions are replaced by their controller, one pod at a time.
          if (g.subsetType === 'StatefulSet' && strat?.updateStrategy?.type !== undefined) strat.updateStrategy.type = 'ReCreate';
          return {
            apiVersion: API_VERSION,
            kind: 'ExtendedDeployment',
            metadata: { name, ...(namespace !== null && { namespace }), ...(Object.keys(labels).length > 0 && { labels }) },
            spec: {
              ...(g.placed.replicas !== undefined && { replicas: g.placed.replicas }),
              selector,
              template: {
                metadata: { labels: { [APP_KEY]: app, ...labels }, ...(g.annotations && { annotations: g.annotations }) },
                spec: g.podSpec as JsonObject,
              },
              regions: g.placed.regions.map((r, i) => (g.overrides[i] ? { ...r, overrides: g.overrides[i] } : r)),
              ...(g.patched.length > 0 && { overriders: g.patched }),
              ...(g.historyLimit !== null && g.historyLimit !== undefined && { historyLimit: g.historyLimit }),
              ...(g.subsetType !== null && g.subsetType !== undefined && { subsetType: g.subsetType }),
              ...(strat && { strategy: strat as JsonObject }),
            },
          };
        });
    });
}

/** A render's input: its DeployRegions and the ExtendedDeployments that use them. */
export interface SpecSet {
  readonly regions: readonly JsonObject[];
  readonly extendedDeployments: readonly JsonObject[];
}

/** 1–5 DeployRegions and 1–3 ExtendedDeployments over them, valid by construction. */
export const validSpecSet: fc.Arbitrary<SpecSet> = fc
  .record({
    regionNames: fc.uniqueArray(dnsLabel, { minLength: 1, maxLength: 5 }),
    edNames: fc.uniqueArray(dnsLabel, { minLength: 1, maxLength: 3 }),
    namespace: fc.option(dnsLabel),
  })
  .chain(({ regionNames, edNames, namespace }) =>
    fc.record({
      regions: fc.tuple(...regionNames.map((name, i) => deployRegion(name, i))),
      extendedDeployments: fc.tuple(...edNames.map((name) => extendedDeployment(name, namespace, regionNames))),
    }),
  );

/** The objects of a set in the order a user would write them: regions first. */
export function objectsOf(set: SpecSet): JsonObject[] {
  return [...set.regions, ...set.extendedDeployments];
}
